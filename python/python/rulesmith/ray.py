"""A simulation as Ray tasks, one per shard, merged into the result of the
whole run (the dict `rulesmith simulate --json` prints):

    python -m rulesmith.ray simulate variants/sirius-basic --games 100000 --shards 64
    python -m rulesmith.ray simulate VARIANT --games N --shards K --address ray://HEAD:10001

Without --address Ray starts a local cluster in this process; with it,
the shards run on a running cluster (docs/simulation.md explains a
multi-node cluster: every node needs this package and the variant folder).
Game `i` of the run is seeded from the run's seed and `i`, so the result
is the same however many shards or machines play it.
"""

import argparse
import json
import sys

import ray

import rulesmith


@ray.remote
def _play_shard(variant, games, index, count, options):
    import rulesmith as rs

    return rs.simulate_shard(variant, games, shard=(index, count), **options)


def simulate(variant, games, shards, address=None, progress=False, **options):
    """Plays `games` games of `variant` in `shards` Ray tasks and merges
    them. `options` are those of `rulesmith.simulate_shard`."""
    if shards < 1:
        raise ValueError("shards must be at least 1")
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    pending = [_play_shard.remote(str(variant), games, i, shards, options) for i in range(1, shards + 1)]
    parts = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=shards, unit="shard", file=sys.stderr)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        parts.extend(ray.get(done))
        if bar is not None:
            bar.update(len(done))
    if bar is not None:
        bar.close()
    return rulesmith.merge(parts)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m rulesmith.ray", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("simulate", help="play a simulation as Ray tasks and merge it")
    s.add_argument("variant")
    s.add_argument("--games", type=int, default=100)
    s.add_argument("--shards", type=int, default=None, help="Ray tasks (default: the cluster's CPUs)")
    s.add_argument("--address", default=None, help="a running Ray cluster (default: a local one)")
    s.add_argument("--players", type=int, default=None)
    s.add_argument("--bots", default="random", help="comma-separated, as rulesmith simulate --bots")
    s.add_argument("--rotate", action="store_true")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    s.add_argument("--engine", default="interpreted", choices=["interpreted", "compiled"])
    s.add_argument("--max-decisions", type=int, default=20000)
    s.add_argument("--out", default=None, help="write the JSON here instead of standard output")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error("--games must be at least 1")
    params = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            p.error(f"--set {item}: expected KEY=VALUE")
        params[key.strip()] = value.strip()
    ray.init(address=args.address, ignore_reinit_error=True, log_to_driver=False)
    shards = args.shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
    try:
        result = simulate(args.variant, args.games, shards, progress=sys.stderr.isatty(),
                          players=args.players, bots=args.bots.split(","), rotate=args.rotate,
                          seed=args.seed, params=params, engine=args.engine,
                          max_decisions=args.max_decisions)
    except rulesmith.RulesmithError as e:
        print(e, file=sys.stderr)
        return 1
    text = json.dumps(result, separators=(",", ":"))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
