"""Turn an SB3 model zip (or a run folder's) into an agent file that is safe to share.

    python -m agents.convert runs/<run>/final_model.zip  # writes runs/<run>/final_model.safetensors
    python -m agents.convert runs/<run> mine.safetensors
    python -m agents.convert someone.zip theirs.safetensors --game follow_the_bitch

The zip is read the safe way (``agents.agent_file``): its weights with
``torch.load(weights_only=True)``, its network from the readable fields of its ``data`` entry,
its game from the run's ``config.yaml`` (or ``--game``); nothing in it is unpickled, so a zip
from anyone may be converted. A bad input is one line and exit code 2.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envs.cli import OneLineParser


@dataclass
class ConvertConfig:
    source: str
    out: str | None = None
    game: str | None = None


def main(cfg: ConvertConfig) -> int:
    from agents.agent_file import convert, model_info
    from envs.engine.rules import get_rules, rules_label

    try:
        rules = get_rules(cfg.game) if cfg.game else None
        out = convert(cfg.source, cfg.out, rules=rules)
        info = model_info(out)
    except (ValueError, OSError) as exc:
        print(f"agents.convert: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size // 1024} KB): {rules_label(info.rules)}, "
          f"observation {info.obs_size}, features {list(info.features) or 'none'}; "
          f"play it with ppo:{out}")
    return 0


def parse_args(argv=None) -> ConvertConfig:
    p = OneLineParser(prog="python -m agents.convert", description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="an SB3 model .zip or a run folder")
    p.add_argument("out", nargs="?", default=None, help="the agent file to write (default: beside the zip)")
    p.add_argument("--game", default=None,
                   help="the preset the model plays, when the zip sits in no run folder")
    a = p.parse_intermixed_args(argv)
    return ConvertConfig(a.source, a.out, a.game)


if __name__ == "__main__":
    sys.exit(main(parse_args()))
