// The pybind11 module envs._stud_core: the only file that knows Python. It converts NumPy
// arrays and Python values for the core (the headers beside it, one per Python module they
// port; docs/architecture.md "Port map"), keeps the bound arrays alive, releases the GIL
// around the work, and exports the constants of constants.h, which envs/batched.py checks
// against the Python names at import. One translation unit: every header is included here, so
// the compiler sees (and inlines) the whole core at once.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "agents/equity.h"
#include "agents/heuristic.h"
#include "arena/lbr.h"
#include "arena/lbr_play.h"
#include "arena/luck.h"
#include "batched.h"
#include "constants.h"
#include "engine/equity.h"
#include "engine/game.h"
#include "engine/hands.h"
#include "engine/rules.h"
#include "observation.h"
#include "util/sparse_rows.h"

namespace py = pybind11;

namespace stud {

using Ints = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

// The data of an output array given from Python, checked: `size` items of T, C-contiguous and
// writeable (the core writes into it in place).
template <typename T>
static T* data_of(py::array& a, py::ssize_t size, const char* what) {
  if (!a || a.size() != size || a.itemsize() != (py::ssize_t)sizeof(T) ||
      !(a.flags() & py::array::c_style) || !a.writeable())
    throw std::invalid_argument(std::string("bad output array: ") + what);
  return static_cast<T*>(a.mutable_data());
}

// An optional input: None gives an absent Input (data nullptr). `keep` holds the converted
// array while the core reads it.
template <typename T>
static Input<T> input_of(const py::object& o,
                         py::array_t<T, py::array::c_style | py::array::forcecast>& keep) {
  if (o.is_none()) return {};
  keep = py::array_t<T, py::array::c_style | py::array::forcecast>(o);
  return {keep.data(), (std::ptrdiff_t)keep.size()};
}

// A Batch as Python holds it: the core plus the NumPy arrays it writes into, kept alive here.
struct PyBatch : Batch {
  using Batch::Batch;
  py::array current_a, mask_a, pot_a, payoffs_a, dones_a, obs_a, observed_a;

  void bind_arrays(py::array current, py::array mask, py::array pot, py::array payoffs, py::array dones) {
    int32_t* c = data_of<int32_t>(current, size, "current_player (int32, N)");
    int8_t* m = data_of<int8_t>(mask, (py::ssize_t)size * rules.num_actions, "mask (int8, N x actions)");
    int32_t* p = data_of<int32_t>(pot, size, "pot (int32, N)");
    int32_t* pay = data_of<int32_t>(payoffs, (py::ssize_t)size * num_players, "payoffs (int32, N x players)");
    uint8_t* d = data_of<uint8_t>(dones, size, "dones (uint8/bool, N)");
    bind(c, m, p, pay, d);
    current_a = current; mask_a = mask; pot_a = pot; payoffs_a = payoffs; dones_a = dones;
  }

  // The layout's pieces as (name, start, size); obs (N, size) float32 receives the observation
  // of each hand's player to act (zeros when nobody is).
  void bind_observation_array(py::array obs, std::vector<std::tuple<std::string, int, int>> pieces,
                              int size_, int max_players, int rounds) {
    ObsLayout L = make_layout(pieces, size_, max_players, rounds);
    float* o = data_of<float>(obs, (py::ssize_t)size * size_, "observations (float32, N x layout size)");
    obs_a = obs;
    bind_observations(o, L);
  }

  void bind_observed_array(py::array seats) {
    check_observations_bound();
    uint8_t* s = data_of<uint8_t>(seats, (py::ssize_t)size * num_players,
                                  "observed seats (bool, N x players)");
    bind_observed_seats(s);
    observed_a = seats;
  }

  void set_observed(Ints slots, py::array_t<uint8_t, py::array::c_style | py::array::forcecast> seats) {
    check_observed_seats_bound();
    if (seats.ndim() != 2 || seats.shape(0) != slots.size() || seats.shape(1) != num_players) {
      std::string got;
      for (py::ssize_t d = 0; d < seats.ndim(); ++d) got += (d ? ", " : "") + std::to_string(seats.shape(d));
      throw std::invalid_argument("observed seats: one row of " + std::to_string(num_players) +
                                  " bools per hand slot given, shape (" + std::to_string(slots.size()) +
                                  ", " + std::to_string(num_players) + "), not (" + got + ")");
    }
    py::gil_scoped_release release;
    set_observed_seats(slots.data(), slots.size(), seats.data());
  }

  py::array_t<float> observe_one(int i, int seat) const {
    hand(i);
    check_observations_bound();
    py::array_t<float> out(layout.size);
    observe(i, seat, out.mutable_data());
    return out;
  }

  void reset_from(py::object seeds, py::object decks, py::object buttons, py::object stacks_in) {
    py::array_t<uint64_t, py::array::c_style | py::array::forcecast> s;
    Ints d, b, st;
    Input<int64_t> bi = input_of(buttons, b), si = input_of(stacks_in, st);
    Input<uint64_t> seeds_in = input_of(seeds, s);
    Input<int64_t> di = input_of(decks, d);
    reset(seeds_in, di, bi, si);
  }

  void step_all(Ints actions) {
    if (actions.size() != size) throw std::invalid_argument("actions: one per hand");
    const int64_t* a = actions.data();
    int bad;
    {
      py::gil_scoped_release release;  // other Python threads run while the hands are stepped
      bad = step(a);
    }
    if (bad >= 0)
      throw std::invalid_argument("action " + std::to_string(a[bad]) + " is not legal in hand " +
                                  std::to_string(bad) + " (that hand was left as it was)");
  }

  // The cards of hands `slots` at once: (M) buttons, and (M, players, MAX_CARDS) face-down and
  // face-up cards in deal order, -1 past the last (the player to act is the bound array).
  py::tuple cards(Ints slots) const {
    const py::ssize_t m = slots.size();
    py::array_t<int64_t> buttons(m);
    py::array_t<int64_t> holes({m, (py::ssize_t)num_players, (py::ssize_t)MAX_CARDS});
    py::array_t<int64_t> ups({m, (py::ssize_t)num_players, (py::ssize_t)MAX_CARDS});
    const int64_t* s = slots.data();
    for (py::ssize_t k = 0; k < m; ++k) hand((int)s[k]);  // each slot checked before any is read
    int64_t *b = buttons.mutable_data(), *ho = holes.mutable_data(), *u = ups.mutable_data();
    for (py::ssize_t k = 0; k < m; ++k) {
      const Hand& h = hand((int)s[k]);
      b[k] = h.button;
      for (int p = 0; p < num_players; ++p)
        for (int c = 0; c < MAX_CARDS; ++c) {
          const py::ssize_t at = (k * num_players + p) * MAX_CARDS + c;
          ho[at] = c < h.nhole[p] ? h.hole[p][c] : -1;
          u[at] = c < h.nup[p] ? h.up[p][c] : -1;
        }
    }
    return py::make_tuple(buttons, holes, ups);
  }

  // Each seat's payoff (chips) in hands `slots` if every player still in checked or called from
  // here to the end of the hand with the deck's real cards: (M, players), zeros for a hand that is
  // over. What training's check-down baseline reads (train/batched_vec.py); a player never sees it.
  py::array_t<int64_t> checkdown_payoffs(Ints slots) const {
    const py::ssize_t m = slots.size();
    const int64_t* s = slots.data();
    for (py::ssize_t k = 0; k < m; ++k) hand((int)s[k]);  // each slot checked before any is read
    py::array_t<int64_t> out({m, (py::ssize_t)num_players});
    int64_t* o = out.mutable_data();
    for (py::ssize_t k = 0; k < m; ++k) {
      Hand h = hand((int)s[k]);
      int64_t* row = o + k * num_players;
      std::fill(row, row + num_players, 0);
      if (h.over) continue;
      for (int guard = 0; !h.over; ++guard) {
        if (guard > 1000 || !h.apply(CHECK_CALL)) throw std::logic_error("checkdown_payoffs: the hand did not end");
      }
      for (int p = 0; p < num_players; ++p) row[p] = h.payoffs[p];
    }
    return out;
  }

  py::dict state(int i) const {
    const Hand& h = hand(i);
    py::dict d;
    std::vector<int> st(h.stacks, h.stacks + h.n), tot(h.total, h.total + h.n),
        com(h.committed, h.committed + h.n), pay(h.payoffs, h.payoffs + h.n);
    std::vector<bool> fo(h.folded, h.folded + h.n);
    std::vector<std::vector<int>> holes, ups;
    for (int p = 0; p < h.n; ++p) {
      holes.emplace_back(h.hole[p], h.hole[p] + h.nhole[p]);
      ups.emplace_back(h.up[p], h.up[p] + h.nup[p]);
    }
    d["current_player"] = h.current;
    d["street"] = h.street;
    d["button"] = h.button;
    d["stacks"] = st;
    d["total_committed"] = tot;
    d["committed"] = com;
    d["folded"] = fo;
    d["hole_cards"] = holes;
    d["up_cards"] = ups;
    d["wild"] = h.wild;
    d["bet_size"] = h.bet;
    d["raises_this_round"] = h.raises;
    d["to_call"] = h.to_call();
    d["bring_in_seat"] = h.bring_in_seat;
    d["is_over"] = h.over;
    d["payoffs"] = h.over ? py::object(py::cast(pay)) : py::object(py::none());
    d["deck"] = std::vector<int>(h.deck, h.deck + h.r->deck_size());  // the hand's whole deal order
    d["starting_stacks"] = std::vector<int>(h.start, h.start + h.n);
    return d;
  }
};

// The n cards card(0) .. card(n - 1) of one hand checked for the evaluator: ids 0..51, none twice
// (the Python reference refuses a repeated card, and a hand without wild cards is scored from a
// mask of the cards held).
template <class F>
static void check_hand(int n, F card, const char* what) {
  uint64_t held = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t c = card(i);
    if (c < 0 || c > 51) throw std::invalid_argument(std::string(what) + ": card ids are 0..51");
    if (held >> c & 1) throw std::invalid_argument(std::string(what) + ": a card is repeated");
    held |= 1ull << c;
  }
}

// EquityPolicy.act's and estimates' arguments checked: one key per slot, each slot a hand with
// a player to act, each key in [0, 2**63). The number of decisions.
static py::ssize_t equity_count(const EquityPolicy& e, const Batch& b, const Ints& slots, const Ints& keys) {
  if (slots.ndim() != 1 || keys.ndim() != 1 || keys.size() != slots.size())
    throw std::invalid_argument("EquityPolicy.act: one key per slot (" + std::to_string(slots.size()) + " slots, " +
                                std::to_string(keys.size()) + " keys)");
  e.check(b, slots.data(), keys.data(), slots.size());
  return slots.size();
}

// LbrTarget from the network's layers as (weight (out, in) float32, bias (out), activation name
// or None), the target's layout pieces as (name, start, size) and its win_probability settings.
using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
static LbrTarget make_lbr_target(const std::vector<std::tuple<Floats, Floats, py::object>>& layers,
                                 bool deterministic, const std::vector<std::tuple<std::string, int, int>>& pieces,
                                 int size_, int max_players, int rounds, int num_actions, int win_samples,
                                 int win_exact) {
  LbrTarget t;
  t.deterministic = deterministic;
  t.num_actions = num_actions;
  for (const auto& [w, b, act] : layers) {
    if (w.ndim() != 2 || b.ndim() != 1 || b.shape(0) != w.shape(0))
      throw std::invalid_argument("LbrTarget: each layer is a weight (out, in) and a bias (out)");
    MlpLayer L;
    L.out = (int)w.shape(0);
    L.in = (int)w.shape(1);
    L.wt.assign((size_t)L.in * L.stride(), 0.0f);
    auto wv = w.unchecked<2>();
    for (int o = 0; o < L.out; ++o)
      for (int i = 0; i < L.in; ++i) L.wt[(size_t)i * L.stride() + o] = wv(o, i);
    L.b.assign(b.data(), b.data() + L.out);
    if (act.is_none()) L.act = ACT_NONE;
    else {
      std::string name = py::str(act);
      if (name == "Tanh") L.act = ACT_TANH;
      else if (name == "ReLU") L.act = ACT_RELU;
      else throw std::invalid_argument("LbrTarget: activations are Tanh, ReLU or None, not " + name);
    }
    t.layers.push_back(std::move(L));
  }
  t.layout = make_obs_layout(pieces, size_, max_players, rounds);
  t.win_layout.win_samples = win_samples;
  t.win_layout.win_exact = win_exact;
  t.win_at = t.layout.start[WIN_PROBABILITY];
  t.layout.start[WIN_PROBABILITY] = -1;  // written from the cache
  for (const auto& [name, start, psize] : pieces)
    if (name == "hole_cards" || name == "hand_class" || name == "win_probability" || name == "wild_cards" ||
        name == "chicago_hole")
      t.varying.emplace_back(start, start + psize);
  t.check();
  return t;
}

}  // namespace stud

PYBIND11_MODULE(_stud_core, m) {
  using namespace stud;
  m.doc() = "The compiled stud core (see envs/batched.py; the Python engine is the reference).";

  // ---- constants (constants.h; envs/batched.py checks each against its Python name) ----
  m.attr("MAX_PLAYERS") = MAX_PLAYERS;
  m.attr("MAX_CARDS") = MAX_CARDS;
  m.attr("MAX_SIZES") = MAX_SIZES;
  m.attr("MAX_STREETS") = MAX_STREETS;
  m.attr("ACE") = ACE;
  m.attr("QUEEN") = QUEEN;
  m.attr("NO_WILD") = NO_WILD;
  m.attr("NO_LOW_CHICAGO") = NO_LOW_CHICAGO;
  m.attr("FOLD") = FOLD;
  m.attr("CHECK_CALL") = CHECK_CALL;
  m.attr("FIRST_BET") = FIRST_BET;
  m.attr("CATEGORY_SHIFT") = CATEGORY_SHIFT;
  m.attr("CATEGORIES") = (int)CATEGORIES;
  m.attr("SHARE_UNITS") = SHARE_UNITS;
  m.attr("GOLDEN") = GOLDEN;
  m.attr("WIN_SAMPLES") = WIN_SAMPLES;
  m.attr("WIN_EXACT") = WIN_EXACT;
  py::dict betting;  // CoreRules.betting's codes, by envs.engine.rules.Betting value
  betting["fixed_limit"] = (int)FIXED_LIMIT;
  betting["spread_limit"] = (int)SPREAD_LIMIT;
  betting["pot_limit"] = (int)POT_LIMIT;
  betting["no_limit"] = (int)NO_LIMIT;
  m.attr("BETTING") = betting;
  py::dict bring_in;  // CoreRules.bring_in's codes, by envs.engine.rules.Order value (None: none)
  bring_in[py::none()] = (int)NO_BRING_IN;
  bring_in["lowest"] = (int)LOWEST;
  bring_in["highest"] = (int)HIGHEST;
  m.attr("BRING_IN") = bring_in;
  py::list pieces;  // the observation pieces the core writes (envs.observation's names)
  for (const char* name : PIECE_NAMES) pieces.append(name);
  m.attr("OBSERVATION_PIECES") = py::tuple(pieces);
  py::list kinds;  // action_kinds' codes: envs.engine.events.ACTION_KINDS
  for (const char* name : ACTION_KIND_NAMES) kinds.append(name);
  m.attr("ACTION_KINDS") = py::tuple(kinds);

  py::class_<CoreRules>(m, "CoreRules")
      .def(py::init<>())
      .def_readwrite("streets", &CoreRules::streets)
      .def_readwrite("street_big", &CoreRules::street_big)
      .def_readwrite("canadian_hands", &CoreRules::canadian_hands)
      .def_readwrite("ace_low_four_straight", &CoreRules::ace_low_four_straight)
      .def_readwrite("follow_the_queen", &CoreRules::follow_the_queen)
      .def_readwrite("queens_wild", &CoreRules::queens_wild)
      .def_readwrite("double_ace_flush", &CoreRules::double_ace_flush)
      .def_readwrite("low_chicago", &CoreRules::low_chicago)
      .def_readwrite("betting", &CoreRules::betting)
      .def_readwrite("max_raises", &CoreRules::max_raises)
      .def_readwrite("ante", &CoreRules::ante)
      .def_readwrite("bring_in", &CoreRules::bring_in)
      .def_readwrite("bring_in_amount", &CoreRules::bring_in_amount)
      .def_readwrite("small_bet", &CoreRules::small_bet)
      .def_readwrite("big_bet", &CoreRules::big_bet)
      .def_readwrite("first_to_act_lowest", &CoreRules::first_to_act_lowest)
      .def_readwrite("open_pair_doubles", &CoreRules::open_pair_doubles)
      .def_readwrite("spread_sizes", &CoreRules::spread_sizes)
      .def_readwrite("pot_fractions", &CoreRules::pot_fractions)
      .def_readwrite("num_actions", &CoreRules::num_actions)
      .def_readwrite("stack", &CoreRules::stack)
      .def_readwrite("deck", &CoreRules::deck);

  py::class_<PyBatch>(m, "Batch")
      .def(py::init<CoreRules, int, int>(), py::arg("rules"), py::arg("num_players"), py::arg("size"))
      .def_readwrite("auto_reset", &Batch::auto_reset)
      .def_readwrite("threads", &Batch::threads)
      .def_readonly("size", &Batch::size)
      .def_readonly("num_players", &Batch::num_players)
      .def_readwrite("win_samples", &Batch::win_samples)
      .def_readwrite("win_exact", &Batch::win_exact)
      .def("bind", &PyBatch::bind_arrays)
      .def("bind_observations", &PyBatch::bind_observation_array)
      .def("observe", &PyBatch::observe_one)
      .def("bind_observed_seats", &PyBatch::bind_observed_array)
      .def("set_observed_seats", &PyBatch::set_observed, py::arg("slots"), py::arg("seats"))
      .def("reset", &PyBatch::reset_from, py::arg("seeds") = py::none(), py::arg("decks") = py::none(),
           py::arg("buttons") = py::none(), py::arg("stacks") = py::none())
      .def("step", &PyBatch::step_all)
      .def("raise_to_amounts", &Batch::raise_to_amounts)
      .def("state", &PyBatch::state)
      .def("cards", &PyBatch::cards)
      .def("checkdown_payoffs", &PyBatch::checkdown_payoffs, py::arg("slots"));

  // ---- tag agent (agents/heuristic.h) ----
  py::class_<TagPolicy>(m, "TagPolicy")
      .def(py::init(&TagPolicy::make), py::arg("bars"), py::arg("draw_length"), py::arg("ace_low"),
           py::arg("large"))
      .def("act", [](const TagPolicy& t, const PyBatch& b, Ints slots) {
             py::array_t<int64_t> out(slots.size());
             t.act_many(b, slots.data(), slots.size(), out.mutable_data());
             return out;
           }, py::arg("batch"), py::arg("slots"));

  // ---- equity agent (agents/equity.h) ----
  py::class_<EquityPolicy>(m, "EquityPolicy")
      .def(py::init(&EquityPolicy::make), py::arg("samples"), py::arg("raise_edge"), py::arg("call_margin"))
      .def_readonly("samples", &EquityPolicy::samples)
      .def("act", [](const EquityPolicy& e, const PyBatch& b, Ints slots, Ints keys) {
             py::array_t<int64_t> out(equity_count(e, b, slots, keys));
             int64_t* o = out.mutable_data();
             py::gil_scoped_release release;
             e.act_many(b, slots.data(), keys.data(), slots.size(), o);
             return out;
           }, py::arg("batch"), py::arg("slots"), py::arg("keys"))
      .def("estimates", [](const EquityPolicy& e, const PyBatch& b, Ints slots, Ints keys) {
             py::array_t<double> out(equity_count(e, b, slots, keys));
             double* o = out.mutable_data();
             py::gil_scoped_release release;
             e.estimates(b, slots.data(), keys.data(), slots.size(), o);
             return out;
           }, py::arg("batch"), py::arg("slots"), py::arg("keys"));

  // ---- local best response's target policy (arena/lbr.h) ----
  py::class_<LbrTarget>(m, "LbrTarget")
      .def(py::init(&make_lbr_target), py::arg("layers"), py::arg("deterministic"), py::arg("pieces"),
           py::arg("size"), py::arg("max_players"), py::arg("rounds"), py::arg("num_actions"),
           py::arg("win_samples"), py::arg("win_exact"))
      // For each spot q (hand slots[q] of the batch, after actions[q] when >= 0, the target at
      // seats[q]): the policies of counts[q] candidate cards (the next counts[q] of cards), rows
      // of probabilities (float64, (sum counts, actions)), and whether the target is to act there
      // (its rows are zeros where not).
      .def("policies", [](LbrTarget& t, const PyBatch& b, Ints slots, Ints seats, Ints actions, Ints cards,
                          Ints counts) {
             const py::ssize_t q = slots.size();
             if (seats.size() != q || actions.size() != q || counts.size() != q)
               throw std::invalid_argument("LbrTarget.policies: one seat, action and count per slot");
             py::ssize_t rows = 0;
             for (py::ssize_t i = 0; i < q; ++i) {
               if (counts.data()[i] < 0) throw std::invalid_argument("LbrTarget.policies: counts are >= 0");
               rows += counts.data()[i];
               b.hand((int)slots.data()[i]);  // checks the slot
             }
             if (rows != cards.size()) throw std::invalid_argument("LbrTarget.policies: the counts add up to the cards");
             py::array_t<double> out({rows, (py::ssize_t)t.num_actions});
             py::array_t<bool> to_act(q);
             double* o = out.mutable_data();
             std::fill(o, o + rows * t.num_actions, 0.0);
             bool* ta = to_act.mutable_data();
             std::vector<int64_t> starts(q, 0);
             for (py::ssize_t i = 1; i < q; ++i) starts[i] = starts[i - 1] + counts.data()[i - 1];
             {
               py::gil_scoped_release release;
               policies_many(t, b, slots.data(), seats.data(), actions.data(), cards.data(), starts.data(),
                             counts.data(), q, o, ta);
             }
             return py::make_tuple(out, to_act);
           }, py::arg("batch"), py::arg("slots"), py::arg("seats"), py::arg("actions"), py::arg("cards"),
           py::arg("counts"));

  // Local best response's bookkeeping and decisions for many slots (arena/lbr_play.h), for
  // arena/lbr.py's BatchedLBR: its target's policy from `target` (kept alive with this object).
  py::class_<LbrPlayer>(m, "LbrPlayer")
      .def(py::init([](LbrTarget& t, std::vector<int> deck, int samples, int cards_per_player, bool canadian,
                       bool double_ace_flush, bool ace_low_four_straight) {
             return LbrPlayer(&t, deck, samples, cards_per_player,
                              EvalOptions{canadian, double_ace_flush, ace_low_four_straight});
           }), py::keep_alive<1, 2>(), py::arg("target"), py::arg("deck"), py::arg("samples"),
           py::arg("cards_per_player"), py::arg("canadian"), py::arg("double_ace_flush"),
           py::arg("ace_low_four_straight"))
      .def("start", &LbrPlayer::start, py::arg("slot"), py::arg("seat"))
      .def("forget", [](LbrPlayer& p, Ints slots) {
             for (py::ssize_t i = 0; i < slots.size(); ++i) p.forget((int)slots.data()[i]);
           }, py::arg("slots"))
      // The roll-outs' generator of the hand in slot: NumPy's default_rng(seed) for a seed below
      // 2**64 (drawn in decide()); None: the caller draws (prepare() lists the hand).
      .def("seed", [](LbrPlayer& p, int slot, std::optional<uint64_t> seed) {
             p.seed(slot, seed.has_value(), seed.value_or(0));
           }, py::arg("slot"), py::arg("seed"))
      .def_readonly("asked", &LbrPlayer::asked)
      .def_readonly("asked_ahead", &LbrPlayer::asked_ahead)
      // The target's rows at every spot where it is to act now, computed on the core's second
      // thread while the caller goes on; the next observe() reads them (lbr_play.h's ahead()).
      .def("ahead", [](LbrPlayer& p, const PyBatch& b) {
             py::gil_scoped_release release;
             p.ahead(b);
           }, py::arg("batch"))
      .def("finish_ahead", [](LbrPlayer& p) {
             py::gil_scoped_release release;
             p.finish_ahead();
           })
      .def("observe", [](LbrPlayer& p, const PyBatch& b, Ints slots, Ints seats, Ints actions) {
             if (seats.size() != slots.size() || actions.size() != slots.size())
               throw std::invalid_argument("LbrPlayer.observe: one seat and action per slot");
             py::gil_scoped_release release;
             p.observe(b, slots.data(), seats.data(), actions.data(), slots.size());
           }, py::arg("batch"), py::arg("slots"), py::arg("seats"), py::arg("actions"))
      // (the rows that need draws, their pool sizes, the rows whose hand began again); then decide().
      .def("prepare", [](LbrPlayer& p, const PyBatch& b, Ints slots, Ints seats,
                         py::array_t<uint8_t, py::array::c_style | py::array::forcecast> masks) {
             const py::ssize_t n = slots.size();
             if (seats.size() != n || masks.ndim() != 2 || masks.shape(0) != n ||
                 masks.shape(1) != p.target->num_actions)
               throw std::invalid_argument("LbrPlayer.prepare: one seat and one mask row (of every action) per slot");
             std::vector<int64_t> rows, sizes, restarted;
             p.prepare(b, slots.data(), seats.data(), masks.data(), (int)masks.shape(1), n, rows, sizes, restarted);
             return py::make_tuple(py::array_t<int64_t>(rows.size(), rows.data()),
                                   py::array_t<int64_t>(sizes.size(), sizes.data()),
                                   py::array_t<int64_t>(restarted.size(), restarted.data()));
           }, py::arg("batch"), py::arg("slots"), py::arg("seats"), py::arg("masks"))
      .def("decide", [](LbrPlayer& p, const PyBatch& b,
                        std::vector<py::array_t<double, py::array::c_style | py::array::forcecast>> draws) {
             std::vector<const double*> u;
             size_t j = 0;
             for (const auto& d : p.deciding)
               if (d.stale && d.draws && !d.own_draws) {
                 if (j >= draws.size() || draws[j].ndim() != 2 || draws[j].shape(0) != p.samples ||
                     draws[j].shape(1) != (py::ssize_t)d.unseen.size())
                   throw std::invalid_argument("LbrPlayer.decide: draws (samples, pool size) for each listed slot");
                 u.push_back(draws[j++].data());
               }
             std::vector<int64_t> out;
             {
               py::gil_scoped_release release;
               out = p.decide(b, u);
             }
             return py::array_t<int64_t>(out.size(), out.data());
           }, py::arg("batch"), py::arg("draws"))
      // The likelihoods kept for slot's next decision, as (cards, likelihood) pairs; and the
      // (cards, policy rows) kept from its last bet or raise, or None (for the tests).
      .def("pending", [](const LbrPlayer& p, int slot) {
             py::list out;
             if (slot >= 0 && (size_t)slot < p.states.size())
               for (const auto& q : p.states[slot].pending)
                 out.append(py::make_tuple(py::array_t<int64_t>(q.cards.size(), std::vector<int64_t>(
                                               q.cards.begin(), q.cards.end()).data()),
                                           py::array_t<double>(q.likelihood.size(), q.likelihood.data())));
             return out;
           }, py::arg("slot"))
      .def("after_bet", [](const LbrPlayer& p, int slot) -> py::object {
             if (slot < 0 || (size_t)slot >= p.states.size() || !p.states[slot].has_after) return py::none();
             const auto& s = p.states[slot];
             std::vector<int64_t> cards(s.after_cards.begin(), s.after_cards.end());
             py::array_t<double> rows({(py::ssize_t)cards.size(), (py::ssize_t)p.target->num_actions});
             std::copy(s.after_rows.begin(), s.after_rows.end(), rows.mutable_data());
             return py::make_tuple(py::array_t<int64_t>(cards.size(), cards.data()), rows);
           }, py::arg("slot"));

  // ---- learner statistics (batched.h) ----
  m.def("action_kinds", [](const PyBatch& b, Ints actions) {
    if (actions.size() != b.size) throw std::invalid_argument("actions: one per hand");
    py::array_t<int8_t> kinds(b.size), streets(b.size);
    action_kinds(b, actions.data(), kinds.mutable_data(), streets.mutable_data());
    return py::make_tuple(kinds, streets);
  }, py::arg("batch"), py::arg("actions"));

  // ---- the evaluator (engine/hands.h) ----
  m.def("evaluate", [](std::vector<int> cards, int wild_mask, bool canadian, bool double_ace_flush,
                       bool ace_low_four_straight) {
    if (cards.empty() || cards.size() > (size_t)MAX_CARDS) throw std::invalid_argument("1 to 7 cards");
    int8_t c[MAX_CARDS];
    check_hand((int)cards.size(), [&](int i) { return (int64_t)cards[i]; }, "evaluate");
    for (size_t i = 0; i < cards.size(); ++i) c[i] = (int8_t)cards[i];
    return evaluate(c, (int)cards.size(), wild_mask, {canadian, double_ace_flush, ace_low_four_straight});
  }, py::arg("cards"), py::arg("wild_mask") = 0, py::arg("canadian") = false,
     py::arg("double_ace_flush") = false, py::arg("ace_low_four_straight") = true);

  // evaluate for every row of an (N, n) array of card ids, 1 <= n <= 7 (local best response
  // scores its roll-outs and the other player's candidate cards with it).
  m.def("evaluate_rows", [](py::array_t<int64_t, py::array::c_style | py::array::forcecast> cards, int wild_mask,
                            bool canadian, bool double_ace_flush, bool ace_low_four_straight) {
    if (cards.ndim() != 2 || cards.shape(1) < 1 || cards.shape(1) > MAX_CARDS)
      throw std::invalid_argument("evaluate_rows: an (N, 1..7) array of card ids");
    const py::ssize_t rows = cards.shape(0), n = cards.shape(1);
    auto in = cards.unchecked<2>();
    for (py::ssize_t i = 0; i < rows; ++i) check_hand((int)n, [&](int j) { return in(i, j); }, "evaluate_rows");
    py::array_t<int64_t> out(rows);
    auto o = out.mutable_unchecked<1>();
    const EvalOptions opts{canadian, double_ace_flush, ace_low_four_straight};
    {
      py::gil_scoped_release release;
      int8_t c[MAX_CARDS];
      for (py::ssize_t i = 0; i < rows; ++i) {
        for (py::ssize_t j = 0; j < n; ++j) c[j] = (int8_t)in(i, j);
        o(i) = evaluate(c, (int)n, wild_mask, opts);
      }
    }
    return out;
  }, py::arg("cards"), py::arg("wild_mask") = 0, py::arg("canadian") = false,
     py::arg("double_ace_flush") = false, py::arg("ace_low_four_straight") = true);

  // The luck correction's shares of one chance node (arena/luck.h): (candidates asked, active).
  m.def("luck_node_shares", [](std::vector<std::vector<int>> known, int seat_at, std::vector<int64_t> cands,
                               std::vector<int64_t> sel, std::vector<int> owners, Ints perm, int wild_mask,
                               bool canadian, bool double_ace_flush, bool ace_low_four_straight) {
    const int f = (int)owners.size();
    if (f >= 2 && (perm.ndim() != 2 || perm.shape(1) != f + 1))
      throw std::invalid_argument("luck_node_shares: perm is (rows, cards to come + 1)");
    const EvalOptions opts{canadian, double_ace_flush, ace_low_four_straight};
    std::vector<double> shares;
    {
      py::gil_scoped_release release;
      shares = luck_node_shares(known, seat_at, cands, sel, owners, perm.data(), f >= 2 ? perm.shape(0) : 0,
                                wild_mask, opts);
    }
    py::array_t<double> out({(py::ssize_t)sel.size(), (py::ssize_t)known.size()});
    std::copy(shares.begin(), shares.end(), out.mutable_data());
    return out;
  }, py::arg("known"), py::arg("seat_at"), py::arg("cands"), py::arg("sel"), py::arg("owners"), py::arg("perm"),
     py::arg("wild_mask") = 0, py::arg("canadian") = false, py::arg("double_ace_flush") = false,
     py::arg("ace_low_four_straight") = true);

  // Local best response's showdown shares (arena/lbr.h): for each candidate face-down card of
  // the other player, my mean share over the rows of `future` that do not hold it.
  m.def("showdown_shares", [](std::vector<int> mine, std::vector<int> their_up, std::vector<int> candidates,
                              Ints future, int mine_to_come, int wild_mask, bool canadian,
                              bool double_ace_flush, bool ace_low_four_straight) {
    if (future.ndim() != 2) throw std::invalid_argument("showdown_shares: future is (rows, cards to come)");
    const EvalOptions opts{canadian, double_ace_flush, ace_low_four_straight};
    std::vector<double> shares;
    {
      py::gil_scoped_release release;
      shares = showdown_shares(mine, their_up, candidates, future.data(), future.shape(0), future.shape(1),
                               mine_to_come, wild_mask, opts);
    }
    py::array_t<double> out(shares.size());
    std::copy(shares.begin(), shares.end(), out.mutable_data());
    return out;
  }, py::arg("mine"), py::arg("their_up"), py::arg("candidates"), py::arg("future"), py::arg("mine_to_come"),
     py::arg("wild_mask") = 0, py::arg("canadian") = false, py::arg("double_ace_flush") = false,
     py::arg("ace_low_four_straight") = true);

  // NumPy's np.random.default_rng(seed).random(count), drawn by the core (util/numpy_rng.h; the
  // local best response's roll-outs draw this way): for the tests that hold the two equal.
  m.def("numpy_random", [](uint64_t seed, py::ssize_t count) {
    if (count < 0) throw std::invalid_argument("numpy_random: count >= 0");
    py::array_t<double> out(count);
    NumpyRandom rng(seed);
    double* o = out.mutable_data();
    for (py::ssize_t i = 0; i < count; ++i) o[i] = rng.next_double();
    return out;
  }, py::arg("seed"), py::arg("count"));
  // argsort(u, axis=1)[:, :k] of an (rows, p) array of distinct values per row (arena/lbr.h).
  m.def("smallest_k", [](py::array_t<double, py::array::c_style | py::array::forcecast> u, int k) {
    if (u.ndim() != 2 || k < 0 || k > u.shape(1))
      throw std::invalid_argument("smallest_k: an (rows, p) array and 0 <= k <= p");
    py::array_t<int64_t> out({u.shape(0), (py::ssize_t)k});
    const double* in = u.data();
    int64_t* o = out.mutable_data();
    {
      py::gil_scoped_release release;
      smallest_k(in, u.shape(0), u.shape(1), k, o);
    }
    return out;
  }, py::arg("u"), py::arg("k"));

  // The target network's tanh (arena/lbr.h tanh_in_place) of a float32 array, into a new one.
  m.def("tanh_float32", [](py::array_t<float, py::array::c_style | py::array::forcecast> x) {
    if (x.size() > std::numeric_limits<int>::max()) throw std::invalid_argument("tanh_float32: too many values");
    py::array_t<float> out(x.request().shape);
    std::copy(x.data(), x.data() + x.size(), out.mutable_data());
    {
      py::gil_scoped_release release;
      tanh_in_place(out.mutable_data(), (int)out.size());
    }
    return out;
  }, py::arg("x"));

  // ---- observation features (engine/equity.h) ----
  // win_probability for one seat holding each of several face-down card lists in turn (the
  // cards local best response supposes the other player holds): one call, one value each.
  m.def("win_probabilities", &win_probabilities, py::arg("rules"), py::arg("button"), py::arg("street"),
        py::arg("seat"), py::arg("wild"), py::arg("holes"), py::arg("face_down_counts"), py::arg("up_cards"),
        py::arg("folded"), py::arg("samples"), py::arg("max_exact"));

  // ---- the training's sparse first layer (util/sparse_rows.h, agents/sparse_input.py) ----
  using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
  using Int32s = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
  // The nonzero entries of x (rows, k), float32: (start (rows + 1,), col (n,) int32, value (n,)).
  m.def("sparse_rows", [](Floats x) {
    if (x.ndim() != 2) throw std::invalid_argument("sparse_rows: x is (rows, k)");
    const py::ssize_t rows = x.shape(0), k = x.shape(1);
    py::array_t<int64_t> start(rows + 1);
    thread_local std::vector<int32_t> col;  // room for every value, kept from call to call
    thread_local std::vector<float> value;
    col.resize(std::max(col.size(), (size_t)(rows * k + 1)));
    value.resize(col.size());
    py::ssize_t n;
    {
      py::gil_scoped_release release;
      n = sparse_rows(x.data(), rows, k, start.mutable_data(), col.data(), value.data());
    }
    py::array_t<int32_t> col_a(n);
    py::array_t<float> value_a(n);
    std::copy(col.begin(), col.begin() + n, col_a.mutable_data());
    std::copy(value.begin(), value.begin() + n, value_a.mutable_data());
    return py::make_tuple(start, col_a, value_a);
  }, py::arg("x"));
  // What sparse_rows gave, checked, as the core reads it.
  auto sparse_view = [](const Ints& start, const Int32s& col, const Floats& value, py::ssize_t k) {
    if (start.ndim() != 1 || start.shape(0) < 1 || col.ndim() != 1 || value.ndim() != 1 ||
        col.shape(0) != value.shape(0) || start.at(start.shape(0) - 1) != col.shape(0) || k < 0)
      throw std::invalid_argument("sparse rows: start (rows + 1,) ending at n, col and value (n,)");
    SparseView v{start.data(), col.data(), value.data(), start.shape(0) - 1, k};
    v.check();
    return v;
  };
  // out (rows, m) = bias + x . weight^T, x as sparse_rows gave it, weight (m, k) as nn.Linear's.
  m.def("sparse_rows_product", [sparse_view](Ints start, Int32s col, Floats value, Floats weight, Floats bias,
                                             py::array out) {
    if (weight.ndim() != 2 || bias.ndim() != 1 || bias.shape(0) != weight.shape(0))
      throw std::invalid_argument("sparse_rows_product: weight (m, k) and bias (m,)");
    const SparseView x = sparse_view(start, col, value, weight.shape(1));
    float* o = data_of<float>(out, x.rows * weight.shape(0), "sparse_rows_product's out (rows, m)");
    py::gil_scoped_release release;
    sparse_rows_product(x, weight.data(), bias.data(), weight.shape(0), o);
  }, py::arg("start"), py::arg("col"), py::arg("value"), py::arg("weight"), py::arg("bias"), py::arg("out"));
  // grad_weight (m, k) = g^T . x for g (rows, m), x as sparse_rows gave it.
  m.def("sparse_rows_gradient", [sparse_view](Ints start, Int32s col, Floats value, Floats g, py::array grad_weight) {
    if (g.ndim() != 2 || grad_weight.ndim() != 2 || grad_weight.shape(0) != g.shape(1))
      throw std::invalid_argument("sparse_rows_gradient: g (rows, m) and grad_weight (m, k)");
    const SparseView x = sparse_view(start, col, value, grad_weight.shape(1));
    if (g.shape(0) != x.rows) throw std::invalid_argument("sparse_rows_gradient: g has one row per row of x");
    float* o = data_of<float>(grad_weight, g.shape(1) * x.k, "sparse_rows_gradient's grad_weight (m, k)");
    py::gil_scoped_release release;
    sparse_rows_gradient(x, g.data(), g.shape(1), o);
  }, py::arg("start"), py::arg("col"), py::arg("value"), py::arg("g"), py::arg("grad_weight"));
}
