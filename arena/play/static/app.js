// Stud Arena table: the page draws what the server sends and sends back action ids.
// No framework, no build step. Every string from the server goes in through textContent.
"use strict";

const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const RANK_TEXT = { T: "10" };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// ---------------------------------------------------------------------------------------------
// Cards and the table

function cardEl(card, { down = false, wildRanks = [] } = {}) {
  if (!card) return el("span", { class: "card back", "data-card": "back", title: "face down" });
  const rank = card[0], suit = card[1];
  const cls = ["card", suit === "h" || suit === "d" ? "red" : "black"];
  if (down) cls.push("down");
  if (wildRanks.includes(rank)) cls.push("wild");
  return el("span", { class: cls.join(" "), "data-card": card, title: card + (down ? " (face down)" : "") },
    el("span", { class: "rank", text: RANK_TEXT[rank] || rank }),
    el("span", { class: "suit", text: SUITS[suit] || "?" }));
}

function seatEl(seat, state) {
  const wild = state.wild ? state.wild.ranks : [];
  const cls = ["seat"];
  if (state.current === seat.seat) cls.push("to-act");
  if (seat.folded) cls.push("folded");
  const hand = el("div", { class: "hand" });
  for (const c of seat.hole) hand.append(cardEl(c, { down: true, wildRanks: wild }));
  for (const c of seat.up) hand.append(cardEl(c, { wildRanks: wild }));
  const status = seat.folded ? "folded" : seat.all_in ? "all-in" : "";
  return el("div", { class: cls.join(" "), "data-seat": seat.seat },
    el("div", { class: "who" },
      el("span", { class: "name", text: seat.name }),
      el("span", { class: "seatno", text: `seat ${seat.seat}` }),
      seat.button ? el("span", { class: "dealer", title: "dealer", text: "D" }) : null),
    hand,
    el("div", { class: "chips" },
      el("span", { class: "stack", text: `stack ${seat.stack}` }),
      el("span", { class: "in", text: `in ${seat.total}` }),
      status ? el("span", { text: status }) : null),
    el("div", { class: "showing", text: seat.value || (seat.showing ? `showing ${seat.showing}` : "") }),
    el("div", { class: "act", text: seat.last_action || "" }));
}

// "7s" -> "7♠" (a card in words, so "7s" is not read as "sevens").
function cardText(card) {
  return card ? (RANK_TEXT[card[0]] || card[0]) + (SUITS[card[1]] || card[1]) : "";
}

function wildText(w) {
  if (!w) return null;
  const parts = [];
  const rank = (r) => (r === "T" ? "10" : r);
  if (w.rank) parts.push(`Wild: ${rank(w.rank)}s (the ${cardText(w.card)} after the ${cardText(w.queen)})`);
  else parts.push("Nothing wild");
  if (w.ended) parts.push(`the ${cardText(w.ended_by)} ended ${rank(w.ended)}s wild`);
  if (w.ranks.includes("Q") && w.rank !== "Q") parts.push("queens wild");
  return parts.join("; ");
}

function chicagoText(c, state) {
  if (!c) return null;
  if (c.winner !== null && c.winner !== undefined) {
    return c.winner === state.you ? "You won Low Chicago"
      : `Low Chicago won by ${state.seats[c.winner].name} (seat ${c.winner})`;
  }
  return c.card ? `Your Low Chicago card: ${cardText(c.card)}` : "Low Chicago: no spade face down yet";
}

function handsText(n) { return `${n} ${n === 1 ? "hand" : "hands"}`; }

function resultEl(state, { onNext, onReplay, phhUrl } = {}) {
  const r = state.result;
  const box = el("div", {});
  const you = r.you;
  const outcome = you > 0 ? "won" : you < 0 ? "lost" : "broke even";
  box.append(el("h2", { text: `Hand over (${r.how}): you ${outcome}` }));
  box.append(el("p", { id: "payoff", class: you > 0 ? "won" : you < 0 ? "lost" : "",
    text: `${you > 0 ? "+" : ""}${you} chips (${r.you_big_bets > 0 ? "+" : ""}${r.you_big_bets} BB)` }));
  const pots = el("ul", { class: "pots" });
  for (const pot of r.pots) {
    for (const w of pot.winners) {
      const who = w.seat === state.you ? "You win" : `${w.name} (seat ${w.seat}) wins`;
      pots.append(el("li", { text: `${who} ${w.amount} from the ${pot.name.toLowerCase()}: ${w.why}` }));
    }
  }
  box.append(pots);
  if (r.shows.length) {
    const shows = el("ul", { class: "shows" });
    for (const s of r.shows) {
      const who = s.seat === state.you ? "You show" : `${s.name} (seat ${s.seat}) shows`;
      shows.append(el("li", { text: `${who} ${s.cards.map(cardText).join(" ")}: ${s.value}` }));
    }
    box.append(el("div", { text: "Showdown" }), shows);
  }
  if (state.session) {
    const ses = state.session;
    box.append(el("p", { text: `Running result: ${ses.big_bets} BB over ${handsText(ses.hands)}` }));
  }
  const buttons = el("div", { class: "result-buttons" });
  if (onNext) {
    buttons.append(el("button", { id: "next-hand", class: "primary", onclick: onNext, text: "Next hand" }));
  }
  if (onReplay) {
    buttons.append(el("button", { id: "replay-this", onclick: onReplay, text: "Replay this hand" }));
  }
  if (phhUrl) {
    buttons.append(el("a", { id: "download-phh", href: phhUrl, download: "", text: "Download PHH" }));
  }
  box.append(buttons);
  return box;
}

// Draws one state into the elements named by ids (table view or replay view).
function drawTable(state, ids, opts = {}) {
  const others = $(ids.others), mine = $(ids.mine);
  others.replaceChildren(...state.seats.filter((s) => !s.you).map((s) => seatEl(s, state)));
  mine.replaceChildren(...state.seats.filter((s) => s.you).map((s) => seatEl(s, state)));
  $(ids.pot).textContent = state.pot;
  const wild = wildText(state.wild);
  $(ids.wild).hidden = wild === null;
  $(ids.wild).textContent = wild || "";
  if (state.wild) $(ids.wild).dataset.rank = state.wild.rank || "";
  const chicago = chicagoText(state.low_chicago, state);
  $(ids.chicago).hidden = chicago === null;
  $(ids.chicago).textContent = chicago || "";
  $(ids.last).textContent = state.last || "";
  const result = $(ids.result);
  result.hidden = !state.result;
  result.replaceChildren(...(state.result ? [resultEl(state, opts)] : []));
}

// ---------------------------------------------------------------------------------------------
// The live table: a WebSocket, a queue of frames shown at the chosen pace

const live = {
  id: null, ws: null, queue: [], shown: null, timer: null, coach: null, retry: 0, closed: false,
};
let config = null;

function pace() {
  const v = Number(localStorage.getItem("pace"));
  return Number.isFinite(v) && localStorage.getItem("pace") !== null ? v : (config ? config.pace_ms : 900);
}

function connect(id) {
  disconnect();
  live.id = id; live.closed = false; live.queue = []; live.shown = null; live.coach = null;
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}/ws/${encodeURIComponent(id)}`);
  live.ws = ws;
  ws.onopen = () => { live.retry = 0; $("table-error").textContent = ""; };
  ws.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch { return; }
    if (msg.type === "frames") { live.queue.push(...msg.frames); pump(); }
    else if (msg.type === "coach") { live.coach = msg; drawCoach(); }
    else if (msg.type === "error") { $("table-error").textContent = msg.message; drawActions(); }
  };
  ws.onclose = (ev) => {
    if (live.ws !== ws || live.closed) return;
    if (ev.code === 4404) {
      $("table-error").textContent = "This table is gone (it timed out or was left).";
      return;
    }
    const wait = Math.min(8000, 500 * 2 ** live.retry++);
    $("table-error").textContent = "Connection lost; reconnecting...";
    setTimeout(() => { if (live.id === id && !live.closed) connect(id); }, wait);
  };
}

function disconnect() {
  live.closed = true;
  if (live.timer) clearTimeout(live.timer);
  live.timer = null;
  if (live.ws) live.ws.close();
  live.ws = null;
}

// Shows the next queued frame; later ones follow at the pace.
function pump() {
  if (live.timer || !live.queue.length) return;
  show(live.queue.shift());
  if (live.queue.length) {
    live.timer = setTimeout(() => { live.timer = null; pump(); }, pace());
  }
}

function send(msg) {
  if (live.ws && live.ws.readyState === WebSocket.OPEN) live.ws.send(JSON.stringify(msg));
}

function show(state) {
  live.shown = state;
  $("title").textContent = state.betting === "fixed_limit" ? state.title
    : `${state.title} (${state.betting.replace("_", " ")})`;
  $("hand-no").textContent = state.hand + 1;
  $("seed-no").textContent = state.seed === null ? "secret" : state.seed;
  $("street").textContent = `${state.street + 1} of ${state.streets}`;
  $("bet-size").textContent = state.bet_size;
  if (state.session) {
    $("session-bb").textContent = state.session.big_bets;
    $("session-hands").textContent = handsText(state.session.hands);
  }
  drawTable(state, { others: "opponent-seats", mine: "my-seat", pot: "pot", wild: "wild", chicago: "chicago",
    last: "last-action", result: "result" }, live.queue.length ? {} : {
    onNext: nextHand, onReplay: () => openOwnReplay(live.id, state.hand),
    phhUrl: `/api/tables/${encodeURIComponent(live.id)}/hands/${state.hand}/phh`,
  });
  const log = $("log");
  log.replaceChildren(...state.log.map((line) => el("li", { text: line })));
  log.scrollTop = log.scrollHeight;
  drawActions();
  drawCoach();
  if (state.result && !live.queue.length) refreshHands();
}

function nextHand() {
  $("table-error").textContent = "";
  send({ type: "next_hand" });
  const b = $("next-hand");
  if (b) b.disabled = true;
}

function drawActions() {
  const box = $("actions");
  const s = live.shown;
  if (!s) return box.replaceChildren();
  if (s.your_turn && !live.queue.length && !live.timer) {
    box.replaceChildren(...s.actions.map((a) => el("button", {
      class: `action ${a.kind}`, "data-id": a.id, "data-kind": a.kind,
      onclick: (ev) => {
        for (const b of box.querySelectorAll("button")) b.disabled = true;
        $("table-error").textContent = "";
        send({ type: "action", action: a.id, hand: s.hand, turn: s.turn });
      },
      text: a.label,
    })));
  } else if (!s.result) {
    const who = s.current === null ? "" : s.seats[s.current].name;
    box.replaceChildren(el("span", { class: "waiting", text: who ? `${who} to act...` : "" }));
  } else {
    box.replaceChildren();
  }
}

function drawCoach() {
  const panel = $("coach-panel");
  const c = live.coach, s = live.shown;
  if (!s || !s.coach) return;
  panel.hidden = false;
  $("coach-name").textContent = s.coach;
  if (!c || c.hand !== s.hand || c.turn !== s.turn || !s.your_turn) {
    const waiting = s.your_turn && !live.queue.length
      ? `${s.coach} is thinking...` : "Advice appears on your turn.";
    $("coach-advice").replaceChildren(el("span", { class: "hint", text: waiting }));
    return;
  }
  const rows = c.choices.map((ch) => el("div", { class: "coach-row" },
    el("span", { text: ch.label }),
    el("span", { class: "coach-bar" }, el("span", { style: `width:${Math.round(ch.p * 100)}%` })),
    el("span", { text: `${Math.round(ch.p * 100)}%` })));
  if (!c.known) rows.push(el("p", { class: "hint", text: "(its choice; its probabilities are not known)" }));
  $("coach-advice").replaceChildren(...rows);
}

async function refreshHands() {
  if (!live.id) return;
  const res = await fetch(`/api/tables/${encodeURIComponent(live.id)}/hands`);
  if (!res.ok) return;
  const hands = await res.json();
  const id = live.id;
  $("hands").replaceChildren(...hands.slice().reverse().map((h) => el("li", {},
    el("span", { text: `Hand ${h.hand + 1}: ${h.payoff > 0 ? "+" : ""}${h.payoff} (${h.big_bets} BB)` }),
    el("button", { class: "replay-hand", onclick: () => openOwnReplay(id, h.hand), text: "replay" }),
    el("a", { href: `/api/tables/${encodeURIComponent(id)}/hands/${h.hand}/phh`,
      download: "", text: "PHH" }))));
}

// ---------------------------------------------------------------------------------------------
// Replay: forward and back through a hand's frames

const replay = { frames: [], at: 0 };

function drawReplay() {
  const n = replay.frames.length;
  $("rp-pos").textContent = n ? `${replay.at + 1} / ${n}` : "no hand loaded";
  $("rp-slider").max = Math.max(0, n - 1);
  $("rp-slider").value = replay.at;
  for (const b of ["rp-first", "rp-prev"]) $(b).disabled = replay.at <= 0;
  for (const b of ["rp-next", "rp-last"]) $(b).disabled = replay.at >= n - 1;
  if (!n) return;
  drawTable(replay.frames[replay.at], {
    others: "rp-opponents", mine: "rp-mine", pot: "rp-pot", wild: "rp-wild",
    chicago: "rp-chicago", last: "rp-last-action", result: "rp-result" });
}

function stepReplay(to) {
  replay.at = Math.max(0, Math.min(replay.frames.length - 1, to));
  drawReplay();
}

async function loadReplay(promise, note) {
  $("replay-error").textContent = "";
  const res = await promise;
  const body = await res.json().catch(() => ({ error: "the server's answer was not JSON" }));
  if (!res.ok) { $("replay-error").textContent = body.error || `error ${res.status}`; return; }
  replay.frames = body.frames; replay.at = 0;
  $("replay-note").textContent = note;
  drawReplay();
}

function openOwnReplay(id, hand) {
  location.hash = `replay=${encodeURIComponent(id)}/${hand}`;
}

// ---------------------------------------------------------------------------------------------
// The start page and routing (#table=ID, #replay, #replay=ID/N)

function opponentInputs() {
  const n = Math.max(2, Math.min(8, Number($("players").value) || 2));
  const box = $("opponents");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren();
  for (let i = 0; i < n - 1; i++) {
    box.append(el("input", { list: "agent-names", name: `opponent${i}`, "aria-label": `opponent ${i + 1}`,
      value: old[i] !== undefined ? old[i] : config.default_opponent }));
  }
}

function syncPlayers() {
  const g = config.games.find((x) => x.name === $("game").value);
  $("players").min = g.min_players; $("players").max = g.max_players;
  if (Number($("players").value) > g.max_players) $("players").value = g.max_players;
  opponentInputs();
}

async function startTable(ev) {
  ev.preventDefault();
  $("start-error").textContent = "";
  const body = {
    game: $("game").value, players: Number($("players").value), betting: $("betting").value,
    opponents: [...$("opponents").querySelectorAll("input")].map((i) => i.value.trim()),
    seed: $("seed").value.trim() || null, coach: $("coach").value.trim() || null,
  };
  const res = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({ error: `error ${res.status}` }));
  if (!res.ok) { $("start-error").textContent = answer.error; return; }
  location.hash = `table=${answer.id}`;
}

async function drawTabs() {
  const res = await fetch("/api/tables");
  if (!res.ok) return;
  const tables = await res.json();
  $("tabs").replaceChildren(...tables.map((t) => el("a", { href: `#table=${t.id}`,
    class: live.id === t.id && !$("table-view").hidden ? "current" : "",
    text: `${t.title} (${t.players})` })));
}

function route() {
  const hash = location.hash.slice(1);
  const views = { start: $("start"), table: $("table-view"), replay: $("replay-view") };
  const showView = (name) => { for (const [k, v] of Object.entries(views)) v.hidden = k !== name; };
  if (hash.startsWith("table=")) {
    const id = decodeURIComponent(hash.slice(6));
    showView("table");
    if (live.id !== id || !live.ws) connect(id);
    $("coach-panel").hidden = true;
    refreshHands();
  } else if (hash.startsWith("replay")) {
    showView("replay");
    const what = hash.slice(7);
    $("back-to-table").hidden = !what;
    if (what) {
      const [id, hand] = what.split("/");
      $("back-to-table").href = `#table=${id}`;
      loadReplay(fetch(`/api/tables/${id}/hands/${Number(hand)}/replay`),
        `Hand ${Number(hand) + 1} as you saw it`);
    } else {
      drawReplay();
    }
  } else {
    showView("start");
  }
  drawTabs();
}

async function init() {
  const res = await fetch("/api/config");
  config = await res.json();
  $("game").replaceChildren(...config.games.map((g) => el("option", { value: g.name, text: g.title })));
  $("betting").replaceChildren(...config.betting.map(
    (b) => el("option", { value: b, text: b.replace("_", " ") })));
  $("agent-names").replaceChildren(...config.agents.map(
    (a) => el("option", { value: a.name, text: a.about })));
  $("agent-help").textContent = "Agents: " + config.agents.map((a) => a.name).join(", ") +
    ". Options go after a colon, e.g. equity:samples=100.";
  $("game").addEventListener("change", syncPlayers);
  $("players").addEventListener("input", opponentInputs);
  $("start-form").addEventListener("submit", startTable);
  const p = $("pace");
  p.value = pace();
  $("pace-value").textContent = `${p.value} ms between actions`;
  p.addEventListener("input", () => {
    localStorage.setItem("pace", p.value);
    $("pace-value").textContent = `${p.value} ms between actions`;
  });
  syncPlayers();
  $("leave").onclick = async () => {
    const id = live.id;
    disconnect();
    live.id = null;
    await fetch(`/api/tables/${encodeURIComponent(id)}`, { method: "DELETE" });
    location.hash = "";
    route();
  };
  $("rp-first").onclick = () => stepReplay(0);
  $("rp-prev").onclick = () => stepReplay(replay.at - 1);
  $("rp-next").onclick = () => stepReplay(replay.at + 1);
  $("rp-last").onclick = () => stepReplay(replay.frames.length - 1);
  $("rp-slider").oninput = (ev) => stepReplay(Number(ev.target.value));
  $("phh-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    const text = await file.text();
    const upload = { method: "POST", headers: { "Content-Type": "text/plain" }, body: text };
    loadReplay(fetch("/api/replay", upload),
      `${file.name}: every card the file holds`);
  });
  document.addEventListener("keydown", (ev) => {
    if ($("replay-view").hidden || ev.target.tagName === "INPUT") return;
    if (ev.key === "ArrowRight") stepReplay(replay.at + 1);
    if (ev.key === "ArrowLeft") stepReplay(replay.at - 1);
  });
  window.addEventListener("hashchange", route);
  route();
}

init();
