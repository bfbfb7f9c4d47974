"""A regression pin on the observation encoder: bit-identical observations and masks.

``DIGESTS`` was written once, from the encoder as it stood before the observation layout
became the encoder (issue part 4: one named layout, each piece written through a view of the
one array). Every later encoder must reproduce it bit for bit: it is a pin, not a
specification, so a deliberate change of the encoding rewrites it (run this module as a
script to print the new table: ``python -m tests.test_observation_layout``) and says why in
the commit.

Per configuration (every preset, every betting structure, 2 to the preset's maximum players,
and ``queens_wild`` on for the Follow the Bitch presets) a few seeded hands are played with
uniformly random legal actions, one encoder following them all (it is pickled and restored
between some hands, as a ``SubprocVecEnv`` worker would get it). Stacks are the default, very
short (antes and bring-ins go all-in) or uneven. At every step, the hand's end included, the
observation and action mask of every seat go into the configuration's SHA-256 (the float32
bytes of the observation, then the int8 bytes of the mask).
"""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest

from envs.actions import action_mask, apply_action
from envs.engine.game import Game
from envs.engine.rules import Betting, get_rules
from envs.observation import Layout, ObservationEncoder, build_layout, one_hot, piece

PRESETS = ("soko", "soko_nordic", "follow_the_bitch", "follow_the_bitch_low_chicago")
HANDS = 6  # per configuration; 912 hands in all


def configurations() -> list[tuple[str, str, int, bool]]:
    out = []
    for preset in PRESETS:
        base = get_rules(preset)
        for betting in Betting:
            for queens_wild in ((False, True) if base.follow_the_queen else (False,)):
                for n in range(base.min_players, base.max_players + 1):
                    out.append((preset, betting.value, n, queens_wild))
    return out


def key(preset: str, betting: str, n: int, queens_wild: bool) -> str:
    return f"{preset}/{betting}/{n}p" + ("/queens_wild" if queens_wild else "")


def pinned_setup(preset: str, betting: str, n: int, queens_wild: bool):
    """The rules of a pinned configuration and the generator its hands are drawn from."""
    overrides = {"betting": betting}
    if queens_wild:
        overrides["queens_wild"] = True
    seed = int.from_bytes(hashlib.sha256(key(preset, betting, n, queens_wild).encode()).digest()[:8],
                          "little")
    return get_rules(preset, **overrides), np.random.default_rng(seed)


def digest(preset: str, betting: str, n: int, queens_wild: bool) -> str:
    """SHA-256 of every observation and mask of every seat at every step of the seeded hands."""
    rules, rng = pinned_setup(preset, betting, n, queens_wild)
    encoder = ObservationEncoder(rules)
    h = hashlib.sha256()

    def record(game: Game) -> np.ndarray | None:
        mine = None
        for seat in range(n):
            obs, mask = encoder.observe(game, seat)
            assert obs.dtype == np.float32 and obs.shape == (encoder.layout.size,)
            assert mask.dtype == np.int8 and mask.shape == (encoder.num_actions,)
            h.update(obs.tobytes())
            h.update(mask.tobytes())
            if seat == game.current_player:
                mine = mask
        return mine

    for hand in range(HANDS):
        if rng.random() < 0.3:
            encoder = pickle.loads(pickle.dumps(encoder))
        kind = hand % 3
        if kind == 0:
            stacks = None
        elif kind == 1:
            stacks = [int(x) for x in rng.integers(1, 40, size=n)]
        else:
            stacks = [int(x) for x in rng.integers(20, 3 * rules.stack, size=n)]
        game = Game(rules, n, stacks=stacks, button=int(rng.integers(n)), seed=rng)
        while True:
            mask = record(game)
            if game.is_over:
                break
            assert np.array_equal(mask, action_mask(game))
            legal = np.flatnonzero(mask)
            apply_action(game, int(legal[int(rng.integers(len(legal)))]))
    return h.hexdigest()


@pytest.mark.parametrize("config", configurations(), ids=lambda c: key(*c))
def test_observations_and_masks_are_bit_identical_to_the_pinned_encoder(config):
    assert digest(*config) == DIGESTS[key(*config)]


def test_every_configuration_is_pinned():
    assert sorted(DIGESTS) == sorted(key(*c) for c in configurations())


# ---------------------------------------------------------------- one piece, one declaration


def play_random_hand(rules, n: int, seed: int):
    """A random legal hand, yielding the game before every action and at the end."""
    rng = np.random.default_rng(seed)
    game = Game(rules, n, button=int(rng.integers(n)), seed=rng)
    while True:
        yield game
        if game.is_over:
            return
        legal = np.flatnonzero(action_mask(game))
        apply_action(game, int(legal[int(rng.integers(len(legal)))]))


def test_a_new_piece_is_one_declaration():
    # A per-seat piece inserted in the middle of the layout: the encoder places, rotates,
    # pads and scales it from its declaration alone, and every other piece keeps its values.
    rules = get_rules("follow_the_bitch_low_chicago")
    m = rules.max_players
    pieces = list(build_layout(rules))
    pieces.insert([p.name for p in pieces].index("button") + 1, piece(
        "bring_in", m, "relative seat posted the bring-in", seats=m,
        state=lambda g, p, s: one_hot(g.num_players, g.bring_in_seat)))
    wider = ObservationEncoder(rules, Layout(pieces))
    plain = ObservationEncoder(rules)
    assert wider.layout.size == plain.layout.size + m
    for game in play_random_hand(rules, 3, seed=5):
        for seat in range(3):
            new, old = (wider.layout.unpack(wider.encode(game, seat)),
                        plain.layout.unpack(plain.encode(game, seat)))
            assert new.pop("bring_in").tolist() == [float(r < 3 and (seat + r) % 3 == game.bring_in_seat)
                                                    for r in range(m)]
            assert {k: v.tolist() for k, v in new.items()} == {k: v.tolist() for k, v in old.items()}


def test_a_piece_without_a_writer_is_refused():
    pieces = [*build_layout("soko"), piece("mystery", 1, "nobody writes this")]
    with pytest.raises(ValueError, match="'mystery' has no writer"):
        ObservationEncoder("soko", Layout(pieces))


def test_the_mask_of_a_seat_not_to_act_is_all_zeros():
    game = Game("soko", 3, seed=1)
    mask = action_mask(game)
    assert mask.flags.writeable and mask.tolist() == action_mask(game, seat=game.current_player).tolist()
    other = (game.current_player + 1) % 3
    assert action_mask(game, seat=other).tolist() == [0] * len(mask)
    mask[:] = 0  # a copy: the cached mask it came from is untouched
    assert action_mask(game).any()


# ---------------------------------------------------------------- the pinned digests

DIGESTS: dict[str, str] = {
    'soko/fixed_limit/2p': 'bf084471434fe52e0f0b1f0b29174f2d52e95aab01a9c529922014545566136d',
    'soko/fixed_limit/3p': '958b211e5ebf35dc091fac96ca33bdbbd5ad7b64f616aeba835c619b86a804ed',
    'soko/fixed_limit/4p': 'bb5cd184dae77111dcddcf007746293b02b916de2abb6327615423bdda338470',
    'soko/fixed_limit/5p': 'fa340d39238917cd6de964215cc36ea45d338cdd97093a35dada5fce30807065',
    'soko/fixed_limit/6p': '71cb025b87440a2d37035960e316f43260f7318e0cef8cd1281ea5b875f9044a',
    'soko/fixed_limit/7p': '45a51cdcf8a9006cbb0351c05938b92b8c3a105b74bf2ea229c990fbb32bafeb',
    'soko/fixed_limit/8p': '05e4cd43b606cd8df940b70a754d457328db95cd3cf0c8e3c8cc990e93ce4f4d',
    'soko/spread_limit/2p': 'be1b0cb2fb52132ef6331beeed096f513d0436522a4323e2e12358e5a18e004f',
    'soko/spread_limit/3p': '881db78228093ac07229208685cd7af8fbc61e0e154bac6487b3c88da8a28871',
    'soko/spread_limit/4p': '80b4496c33f888b56e39c834cb85a9d117594fab8e25abe3fac01a75b2e93d50',
    'soko/spread_limit/5p': 'a7eb2d03ccb48e16d53e29e2371749078fad164bdbb60ee01a09bc7f98c03443',
    'soko/spread_limit/6p': 'cd8e02e4c254171e5e2fafce05e96a00692ed06f5044ece54ae15511d5ef101e',
    'soko/spread_limit/7p': '5964a1504c68e1d9f78387ee6742f63e2df0f827c166cb9c6e69571e2b047526',
    'soko/spread_limit/8p': 'edc97db2fd77b1e65f8a7c6503735ddd062a23a836ef1587e369b036fed6c295',
    'soko/pot_limit/2p': '4e269a83e6e3157ddd41a940f5b062020029d2e03fe70d6514cf19805b58711e',
    'soko/pot_limit/3p': 'b8c3875c5abd383cda3e57c0add190412d6a41d8b625f073dfb176a204142f01',
    'soko/pot_limit/4p': 'dd1cd8af0084ba8beaa7e7be10e8c20baeeb59e7b11d9d7924e747a7e20cd30d',
    'soko/pot_limit/5p': '9bccc5ec87464b132fbf420f2dc6964e79fd0b800970d1e28d12efd2d07b4072',
    'soko/pot_limit/6p': 'bee87a8de1a4956b4d92fe785a8f7a35083d5e7cc1942096b6d692bac8efc9b2',
    'soko/pot_limit/7p': '7e64b2faabde335b0c1e337255e117cb412ba7d2ba49aa1236b6779932c3ca34',
    'soko/pot_limit/8p': 'd3e14f3a8178c76895adc450f23b4a583226a71a28936d40a10d3c4ad41a501f',
    'soko/no_limit/2p': 'f4f4b3470d75e467b0abc222330026ae91c3a7bd3c00e1e1cd6a8ab8cff97e50',
    'soko/no_limit/3p': '268ddc00105e04abfdf476bdf158a4ebda4c00f3b1a374be1fbf6e7d99f173fe',
    'soko/no_limit/4p': '7f90d6ac52afe550d0b2bb77026c21d5a515ceacdb7b238812141d442ef9e709',
    'soko/no_limit/5p': '7a4b7dd70b896d4ab7a503b311d9d9c5d1e241e193eb6fe35d5551d33b8ed353',
    'soko/no_limit/6p': 'eb186de228c201e0f837f7595c3f8b346b49b6c7943bf48b00835c2659bed7ff',
    'soko/no_limit/7p': '0e5d5f70992fbd888fdc89fa7cc2ab499004f645472c797b36b6c888831d9507',
    'soko/no_limit/8p': 'bf95d5b8df0ed7f7f1f40b33cf64c036b9833cb0f56e8bec697c914335fc8552',
    'soko_nordic/fixed_limit/2p': 'aa0893f0aaac741633e17b5018f5e9ad04bb0a31ef8289f5039118210afbed8d',
    'soko_nordic/fixed_limit/3p': 'e7484fbc8110f1666c7412d6a6aeace16b9d5411d71cf31aed6cb6070138429c',
    'soko_nordic/fixed_limit/4p': '1c7bb9bfcfa055eee31343f660942b03a4af09892916b9e92d9ded73f39825ad',
    'soko_nordic/fixed_limit/5p': '5ed1f29519e7a73379ad246b31e34a9c4a726ad874921a34d028333acc104489',
    'soko_nordic/fixed_limit/6p': '81bc805339890a77e74182ec59bfcd541ea3844b722b89095377e3c3f183c31f',
    'soko_nordic/fixed_limit/7p': 'd78ffad1556f4aedffb4715ad43db509f6e2b7057364c7cf62c89774f040e085',
    'soko_nordic/fixed_limit/8p': 'f18ee55369b6b93bc640e3e57d351ff08fc6e26e43692486dc3f08d6f5aec34a',
    'soko_nordic/spread_limit/2p': 'ba35cd284e299683fd93b454a72af06314e5d3d938e6389144d263086885426f',
    'soko_nordic/spread_limit/3p': '47b93e0d749c00ed1b549be203576dcb1c510f41cfd9a909c10a2f9a877ddaab',
    'soko_nordic/spread_limit/4p': '7223d43f024664ef7b4fc1db8684121491a69914aef0bc425af99c568d88ea6a',
    'soko_nordic/spread_limit/5p': '890ce2508f301607a8b0bc55b93a9824e39b46bbe01921f93e683b2a155e6d7a',
    'soko_nordic/spread_limit/6p': '7df214037007733257aae53a3d25f7247f5daca215c269061a748e3602fb46f1',
    'soko_nordic/spread_limit/7p': '0e1661ea31ebf0138abc8f4398230d3b4f8f6e6551bf93cfdadcf19f511ee768',
    'soko_nordic/spread_limit/8p': 'c95608f22d1795327b52fab07a53110f1aa7bf17553eaf7b20f2c32824550701',
    'soko_nordic/pot_limit/2p': '992268ba9c0488d8f1d779770d0675e9c983be3f935f6d105959ce7779eea572',
    'soko_nordic/pot_limit/3p': '5a1abd4b881bb914c3ff4fea337530039326777691005c594c6cbb891ac43dbe',
    'soko_nordic/pot_limit/4p': '6e67f567e91de6624940386d5fa4e42ac6f08ca8999d868169c1cb1e1f00b57e',
    'soko_nordic/pot_limit/5p': 'd417bc451176bceeca02abd7c38a4cbf05e3e214b8853213970ec1b8f69b5f74',
    'soko_nordic/pot_limit/6p': '5139d1c3d23998e17d3d8aca6da71bc23ff632d297999f9cb91283ced8a5e11d',
    'soko_nordic/pot_limit/7p': 'da68cd028699106152762bf52c3e7158c8db604c1c8b399cca869c4704272894',
    'soko_nordic/pot_limit/8p': '6832e723097df32821b623bb0fb69f47037f7f31950d45db96fa801cf767e2d9',
    'soko_nordic/no_limit/2p': 'd2b758d9b82c21b9231af5b6acba5b2e002ac35e22b3126de187bf67195b6830',
    'soko_nordic/no_limit/3p': '1c4fb58a866c2f9398719d422c29c6b02ffe173fbfd9ead7d215c4cfdf7176c7',
    'soko_nordic/no_limit/4p': '7216434225eaca03fdb353dfcb75fa628ccfa3c4bbeafe888435de2224e876eb',
    'soko_nordic/no_limit/5p': '6ff3c618f1b9a209ea45400958b898265618608a8714ba1d76b4628a0fddd606',
    'soko_nordic/no_limit/6p': '5746de9b6e707ccbbb5e6dc794c3a825cc902d8dfdb95331ad3394bf710898ce',
    'soko_nordic/no_limit/7p': '4ccd75b102c0e17701c0078febaee43c62fab60e3929017b4601381bdcc15c1d',
    'soko_nordic/no_limit/8p': 'fa678e2bef52433ada64b97742486c1952fb1f2502fa2d1335eaad0da0b345c6',
    'follow_the_bitch/fixed_limit/2p': '2b947f3c5c9b7b209fffcae69f22211747121aba120ba59ff7c1dc94ad88022b',
    'follow_the_bitch/fixed_limit/3p': 'b731047604137e0f74c5b4f9241680a7fd4aa220fcd5138d982397c7b7656182',
    'follow_the_bitch/fixed_limit/4p': 'b888bebfdf06aae1ed771a0c823d180f37de1fb89a04a4928bd899978d03d309',
    'follow_the_bitch/fixed_limit/5p': 'cc66d4d163e4048e7202317d6d4f69097721b6ecd16aafdedc63442cf4628a52',
    'follow_the_bitch/fixed_limit/6p': 'fdca9e41392e62e20576ee04bf12a47349411e08d2b2748a8ea3a60642ca3e56',
    'follow_the_bitch/fixed_limit/7p': '25d770ea752bd47c48e9dbace54b6e2dfe73aa071bc748be008617449d577b7b',
    'follow_the_bitch/fixed_limit/2p/queens_wild':
        '368ce534ac24068f0653adb4e98f54c6bd48dc7a05352523bd185bc59521633e',
    'follow_the_bitch/fixed_limit/3p/queens_wild':
        'e8f1ded2c54554b1199a6448f919746d5f028378229ec14f530ee8a771fa8d9e',
    'follow_the_bitch/fixed_limit/4p/queens_wild':
        'f271c650cf56be78e1c87bcb5b7eef3d4a9ee24f4ee370b97c7945f000f3f66d',
    'follow_the_bitch/fixed_limit/5p/queens_wild':
        '13e10e9fcd3a491e3eb867cfa173c059570346c803546f579ea73a4f81e50798',
    'follow_the_bitch/fixed_limit/6p/queens_wild':
        'e92fd17dfe431c118837f17fa6505c42055c6510e67656affbdbae0f8142e867',
    'follow_the_bitch/fixed_limit/7p/queens_wild':
        '9a66a09fad026a05a063b2e97f7c97487b3f8c8de29bfb4fa5bc9fabb3012586',
    'follow_the_bitch/spread_limit/2p': 'c44b3aeb1ef7fe963dbbd616f30f9f3062d7f96d72a753c5bf55f4eb9ecdc180',
    'follow_the_bitch/spread_limit/3p': '8f45d5f0de1584c5fc2730eb1df08a89aeb3afb050b9621ce2bdc71b82e547be',
    'follow_the_bitch/spread_limit/4p': 'a5c3652abda459bc3d06c77ddb55001f1d885446f3ac7c4e8efdd0f03f1f1cbd',
    'follow_the_bitch/spread_limit/5p': 'f51c438943c77edea18b8b57e8bb83f97da059b69030fe43856b29d60bba9bda',
    'follow_the_bitch/spread_limit/6p': 'c6161b14de4ef263f435d954ac86be14cb7612a284b19f24017cbb91a371f154',
    'follow_the_bitch/spread_limit/7p': '53f4a40a963586c0820489d8d565a5c5d986264795f4c203eb372163a9c5b08e',
    'follow_the_bitch/spread_limit/2p/queens_wild':
        'a1c0c6dc29f18f7ad414b26b07082756d88c8bd2a96a61ae6ce9f76b6f2af9f2',
    'follow_the_bitch/spread_limit/3p/queens_wild':
        '05bc1f6e368549983ffa692d26a792aa6b7e039793c589d870a1f66ac11f6c17',
    'follow_the_bitch/spread_limit/4p/queens_wild':
        '52acc188c64d34851f287cd4bc8e9b713ffcea916bd2a22fa869cb52df1b58a3',
    'follow_the_bitch/spread_limit/5p/queens_wild':
        '697fafd17173b2dea3e7db397c749cf52b6e33ecbf70a933a8e89afa024becab',
    'follow_the_bitch/spread_limit/6p/queens_wild':
        '04fe4a19b215bceed54189bb7aed294d4fd1c808e7f02b68564a3100bf98cee5',
    'follow_the_bitch/spread_limit/7p/queens_wild':
        '0faa3c2dfb61a36809d80b5edeca06573eff91a0d1fe8c8d4afcb9187977af5f',
    'follow_the_bitch/pot_limit/2p': '411b54c2b6020ddbc475ce8bcd5a88511a916f3f415207741541e389feb36c7f',
    'follow_the_bitch/pot_limit/3p': '0fb05b21654804757dddd3d60a88e2b713315b84f0e46eca6306586b442ebc08',
    'follow_the_bitch/pot_limit/4p': '82a064c2fe2e5501e24c35810790b5b85bc8212e862898d40091cccb76f823c2',
    'follow_the_bitch/pot_limit/5p': '298094e4e50412b3eb8d1a6407f7b3b239495f7597f084cf7fda976c860cd499',
    'follow_the_bitch/pot_limit/6p': '0d63e4a40c59815c0245523ae3b9584b685ae7e80c09429b4b57f7a5e53d58ab',
    'follow_the_bitch/pot_limit/7p': '20de8383d21c4e39c81779284b33f21af6f9933aeac54591944911dd828e20fd',
    'follow_the_bitch/pot_limit/2p/queens_wild':
        '53f636805cd85f9514027de3952654a4ab53dd614f49c1295d95b72b3a03dc5b',
    'follow_the_bitch/pot_limit/3p/queens_wild':
        '63ee4e3acb49b03d5cfd42d875b71a780bdecc582751c95597219440bf73a05d',
    'follow_the_bitch/pot_limit/4p/queens_wild':
        'a224c9dc6c5e5a2f5a9da93017ab4a3ed92ca9699751675d69174b8467a41f6d',
    'follow_the_bitch/pot_limit/5p/queens_wild':
        '9531a22bdd1e6244c7073c575dc4880cc524acc0ebb6d66071c6b320992c85c8',
    'follow_the_bitch/pot_limit/6p/queens_wild':
        '78996a40f2435a03e87cebdc867076297d1522151081da7122113e281edf5156',
    'follow_the_bitch/pot_limit/7p/queens_wild':
        '8c671b0302e492a27b976330122e6999f77440c5cb6c5dbf73483827d03959d3',
    'follow_the_bitch/no_limit/2p': '78d83741659fe4d1d3dd57a00d5ed0e672a3b098528b93b97666a0f0d394fc61',
    'follow_the_bitch/no_limit/3p': '3e325831cea9490edc13aec19c53373c08ef0e7144e43286ee239c081fd68066',
    'follow_the_bitch/no_limit/4p': '2df8bc5446b50aed10d182f4e3593893803277f93379f19ce8e726fe56f40d3e',
    'follow_the_bitch/no_limit/5p': 'eaad997d6061d2d6e9bc11ca3f66c265a0e6da4966b3b19c76f12dbfada8a580',
    'follow_the_bitch/no_limit/6p': 'a4e8fcbd8fd8bf689827e05a20f8c8231439f6f2a15cc0d65c0e4872c941502d',
    'follow_the_bitch/no_limit/7p': '9e67b3786154ec64add1599e4070b3c7272a05eaa85efe0b8670a1f0f1a67b9c',
    'follow_the_bitch/no_limit/2p/queens_wild':
        'abc8f10063fd93a771c6d0fdfd9be3c726d8707b28c192fb2f7e94b4dcf2d86d',
    'follow_the_bitch/no_limit/3p/queens_wild':
        '055377fd61a4b5b5c965745ab8e9282918f57f3d4dc0a686929676d22baf2fe1',
    'follow_the_bitch/no_limit/4p/queens_wild':
        'ac44eb01fb3ee859ab0bc0223be19274baa46eb2899d22efed666fbefc01ea12',
    'follow_the_bitch/no_limit/5p/queens_wild':
        '183a56d6e7925e342a722315431e00bf0ae9c99b806b1b5c0c5c8fd2007a1b24',
    'follow_the_bitch/no_limit/6p/queens_wild':
        '3210967e4bb0e72903e8ac3645631612e639d17494080034b7983b01c3ab5862',
    'follow_the_bitch/no_limit/7p/queens_wild':
        '852ecb85cd8129745600bac5a454ec9849b8d0dc6a83b00227c711df7908d1ee',
    'follow_the_bitch_low_chicago/fixed_limit/2p':
        '7d13423a7877792337fcb57a59c73b140528b3a6641cce4b1920b349ab0776c8',
    'follow_the_bitch_low_chicago/fixed_limit/3p':
        'f099ffcf0c313b3c4c3c23fc7f63641c2c124f733415921698a7c82d61bbb246',
    'follow_the_bitch_low_chicago/fixed_limit/4p':
        'f3d23a6acdee7b8549da29adc6cd8e1388e3ff4bac3227b15087936bbf26a068',
    'follow_the_bitch_low_chicago/fixed_limit/5p':
        '3c4a3b1f8b82fac9ced1824393a1ccfa60a73cb31c10795e45b29e738fdc56e7',
    'follow_the_bitch_low_chicago/fixed_limit/6p':
        'db889a04bae67913e24d7c7e04359e32b0e2552e6c93886b51b7cbdb594b9ac4',
    'follow_the_bitch_low_chicago/fixed_limit/7p':
        '7f6b16df76d273f2706a96505e5698b8b0acbc584dce5b9d971e02a428ac9c68',
    'follow_the_bitch_low_chicago/fixed_limit/2p/queens_wild':
        '287ee4a7eb66da05deea16bcb9c8bbb18cf3dbb9cc6d82e3dfa6475e9dcb6952',
    'follow_the_bitch_low_chicago/fixed_limit/3p/queens_wild':
        '1f8d76c70e82090610fa5771f26c820afa6c680dc47d07eb64c77abb44dad0c5',
    'follow_the_bitch_low_chicago/fixed_limit/4p/queens_wild':
        '683b9af2e9ebe35515947dee66357e5ec29439fdaf83b4b78ddff3c479a2aeff',
    'follow_the_bitch_low_chicago/fixed_limit/5p/queens_wild':
        '2b68103351c72b92912a8bb0a8b701ec9560a6ae21d5e0400038dee77522f456',
    'follow_the_bitch_low_chicago/fixed_limit/6p/queens_wild':
        '7854e4e3053d6bbd5131065751995a2e84d121fd0f519b5f8eceeba240319650',
    'follow_the_bitch_low_chicago/fixed_limit/7p/queens_wild':
        '585534490a506bcbef7b0c83a2e8acc929be7efc07454cfe08749b698964cc81',
    'follow_the_bitch_low_chicago/spread_limit/2p':
        '001888f08731649a012bd3552ffcf515baca723778d3ebd43a1ae02709c9859e',
    'follow_the_bitch_low_chicago/spread_limit/3p':
        '482d20f536aec2b612b2899721040f2c52c9675bbb6e780f3b018a6cd68b8ee7',
    'follow_the_bitch_low_chicago/spread_limit/4p':
        'd7a1efbbfaf526e91835b2de7e349a87078c9a6f9c2ad59c9665fa41be3256a1',
    'follow_the_bitch_low_chicago/spread_limit/5p':
        '14d40e3190e624b5aa0cc5f6a62b95e9a5abef03a27b532e42257dd8e6307723',
    'follow_the_bitch_low_chicago/spread_limit/6p':
        '50ce798e3876d83bb4ca57fd74622bed3bc02c2892a2cd5ba5aea65075cadcbe',
    'follow_the_bitch_low_chicago/spread_limit/7p':
        '0704896e9610ae728bf4c3a0fda6caf9ee948ac9e077508266d61d7febbc2956',
    'follow_the_bitch_low_chicago/spread_limit/2p/queens_wild':
        '806ecb87a9633232de5acd80dc682919f29da679ba0778aee065cd0678e4e216',
    'follow_the_bitch_low_chicago/spread_limit/3p/queens_wild':
        '20c152748ccb77d8e6f6830a20921427f4d32e219582d1e988d4e869b3eda2b3',
    'follow_the_bitch_low_chicago/spread_limit/4p/queens_wild':
        '82e36df3ef21e755458ca79a76f4d8f785df1e6ea3515d5ab1d36b74863e4173',
    'follow_the_bitch_low_chicago/spread_limit/5p/queens_wild':
        '6246370f089c6edcf2f247c678f540d18a86c2530bc606cd2bf485b97a2791bb',
    'follow_the_bitch_low_chicago/spread_limit/6p/queens_wild':
        '3a725dcbe2d9484484e98e07a09047a4f5349782070ed34b7c07ef42867cd7d0',
    'follow_the_bitch_low_chicago/spread_limit/7p/queens_wild':
        'f740bba05d2d355ead13d8dda5d55d0f4280b75d18b488323414a1aff7ffdad2',
    'follow_the_bitch_low_chicago/pot_limit/2p':
        'f11ca3edc95862cb27b960c838a960cdfd63bc20650d77ad9e388ed259a49f8a',
    'follow_the_bitch_low_chicago/pot_limit/3p':
        '1e06ba5e570cc844d80fba8cef0b13469a7eee328fd5209f0679ee634bec5f87',
    'follow_the_bitch_low_chicago/pot_limit/4p':
        '28def35a3db254ffbc3dc7588e3c94eb6b698707689e10340ec6a9465d49c25d',
    'follow_the_bitch_low_chicago/pot_limit/5p':
        'beb3be3e1876d063ab366be8c38877fa68ff401308b9b02cb3a33ccc79ad849c',
    'follow_the_bitch_low_chicago/pot_limit/6p':
        'be3a568490fec2e18b267d948c0a578ecbba85931ee68be826f0eaac9e206117',
    'follow_the_bitch_low_chicago/pot_limit/7p':
        'e088680ae9685ef209633ba8b3b66f986f05307aad410b0aa878f4a1ee94565f',
    'follow_the_bitch_low_chicago/pot_limit/2p/queens_wild':
        '6c100718755636412041d3e030688fa73185b4f9cc5d47a771ed2880a749a4e8',
    'follow_the_bitch_low_chicago/pot_limit/3p/queens_wild':
        '85b89c2b4acd252eb457d63c3c68d66fd6e8fa4bf401e239cc7d42ea3aa98070',
    'follow_the_bitch_low_chicago/pot_limit/4p/queens_wild':
        'ba2005fa3065c4650cc08e5f26741f9651ccabeb445edef89cafff249f582913',
    'follow_the_bitch_low_chicago/pot_limit/5p/queens_wild':
        'd7af92571ccb7d6deb1f9cffdcc864db2ef1a391570ea84370d4062b72026dfb',
    'follow_the_bitch_low_chicago/pot_limit/6p/queens_wild':
        'e75d047876d32e3491ddfc144f03e9a0d93e360976d064b109a32dc7e4c8fb8a',
    'follow_the_bitch_low_chicago/pot_limit/7p/queens_wild':
        '2035eb19ac896bef620346e80f1c0d2dd9064f5d99133187d5c1ac4a5223ca5a',
    'follow_the_bitch_low_chicago/no_limit/2p':
        '315acab0c7dbb3d47cdf21fc369b4adc1ae3769edb3148942ccd6c56bb642ea9',
    'follow_the_bitch_low_chicago/no_limit/3p':
        '71130d3acb4df2b691dbcefac9dd42dcc7c2744e99e62a89dd843dbc64236cdc',
    'follow_the_bitch_low_chicago/no_limit/4p':
        '08f3935876b9708d7c35dd157fe84455322a642a48448e6b354bc2a89149b052',
    'follow_the_bitch_low_chicago/no_limit/5p':
        '4ca6cce4184b99b803c7d1b8f4e4caed00d4ef7c86d139a4ae7cc28cee1a7e40',
    'follow_the_bitch_low_chicago/no_limit/6p':
        '2d1c90f7752310291c7d0863c42316031b4e61d7c35213c7181cf1b05fb6e04d',
    'follow_the_bitch_low_chicago/no_limit/7p':
        '3d9ccdfb34b21c657748227e68f54ecf88566c336bc9a61b2872d7538f6cb19a',
    'follow_the_bitch_low_chicago/no_limit/2p/queens_wild':
        '9a7cdce0b51d9a238a8750a7df7eba41c9d4844615d09be86dcd5b6b5931afe2',
    'follow_the_bitch_low_chicago/no_limit/3p/queens_wild':
        'a7fceec1230e1755286d4142d1cd55fdf02a4e9eb7ad8e27fb2fd515422db506',
    'follow_the_bitch_low_chicago/no_limit/4p/queens_wild':
        '7defd1ad0d8ea933f0a979d6c77d27ced7ae21c963ed4ebe3d3cf9e949b9fbd9',
    'follow_the_bitch_low_chicago/no_limit/5p/queens_wild':
        '72f9931b717b526c32cff5e56dbdf3a4170a68d70a4a943a768db0a21566e0f6',
    'follow_the_bitch_low_chicago/no_limit/6p/queens_wild':
        '667b315c9ceca965c9c35ce12df7cf3e85e9113c63dd56ba46837599ce47714a',
    'follow_the_bitch_low_chicago/no_limit/7p/queens_wild':
        '14633afc2865519d4e2b206c4ed3582cbc7ee48412524604b4fb595934599948',
}


if __name__ == "__main__":
    print("DIGESTS: dict[str, str] = {")
    for c in configurations():
        entry = f"    {key(*c)!r}: {digest(*c)!r},"
        # An entry longer than ruff's line length goes on two lines, as in the table above.
        print(entry if len(entry) <= 110 else entry.replace(": ", ":\n        ", 1))
    print("}")
