#!/usr/bin/env python3
"""Regenerates the bundled example snapshots (docs/examples.md explains the setting).

The HEART paper's testbed: five heterogeneous workers with per-core speed 1.0, 0.9, 0.7, 0.5, 0.4,
4 cores each, one replica per component per node with a CPU limit of 1 core. The snapshot is what
Prometheus would have measured over one 30 s window while traffic was still split uniformly
(kube-proxy's random choice): every replica receives the same rate; a replica whose CPU limit
cannot serve it is saturated (CPU at the limit, served rate = limit / cost).
Links: scenario B of the paper, two workers (w3, w5) behind 20-60 ms links, all others 0.1-0.9 ms,
0.05 ms on the same node. Fixed seed, so the files are reproducible: python3 examples/generate.py
"""
import json
import random

SPEEDS = {"w1": 1.0, "w2": 0.9, "w3": 0.7, "w4": 0.5, "w5": 0.4}
SLOW_LINK_NODES = {"w3", "w5"}
LIMIT_CORES = 1.0


def delays(rng):
    out = []
    pairs = {}
    for a in SPEEDS:
        for b in SPEEDS:
            if a == b:
                ms = 0.05
            elif (b, a) in pairs:
                ms = pairs[(b, a)]
            elif a in SLOW_LINK_NODES or b in SLOW_LINK_NODES:
                ms = round(rng.uniform(20, 60), 1)
            else:
                ms = round(rng.uniform(0.1, 0.9), 2)
            pairs[(a, b)] = ms
            out.append({"from": a, "to": b, "millis": ms})
    return out


def snapshot(cost_ms, calls, entry_rps, seed):
    rng = random.Random(seed)
    nodes = [{"name": n, "locality": f"region1/zone1/{n}", "cpuCores": 4} for n in SPEEDS]
    served = {}
    for call in calls:
        served[call["callee"]] = served.get(call["callee"], 0) + call["requestsPerSecond"]
    replicas = []
    for component, ms in cost_ms.items():
        offered = served[component] / len(SPEEDS)
        for i, (node, speed) in enumerate(SPEEDS.items(), start=1):
            cost = ms / 1000 / speed                       # CPU-seconds per request on this node
            rps = min(offered, LIMIT_CORES / cost)         # a saturated replica serves at its limit
            replicas.append({"pod": f"{component}-{i}", "component": component, "node": node, "ready": True,
                             "cpuCores": round(rps * cost, 6), "cpuLimitCores": LIMIT_CORES,
                             "requestsPerSecond": round(rps, 6)})
    for call in calls:
        if call["caller"] == "ingress":
            call["byCallerNode"] = {n: entry_rps / len(SPEEDS) for n in SPEEDS}
    return {"windowSeconds": 30, "nodes": nodes, "replicas": replicas, "calls": calls, "delays": delays(rng)}


pairwise = snapshot({"a": 5, "b": 6},
                    [{"caller": "ingress", "callee": "a", "requestsPerSecond": 100.0},
                     {"caller": "a", "callee": "b", "requestsPerSecond": 100.0}], 100.0, seed=7)
dag = snapshot({"frontend": 5, "b": 6, "c": 4, "d": 3, "e": 2.5},
               [{"caller": "ingress", "callee": "frontend", "requestsPerSecond": 400.0},
                {"caller": "frontend", "callee": "b", "requestsPerSecond": 400.0},
                {"caller": "frontend", "callee": "c", "requestsPerSecond": 400.0},
                {"caller": "b", "callee": "d", "requestsPerSecond": 400.0},
                {"caller": "c", "callee": "d", "requestsPerSecond": 400.0},
                {"caller": "d", "callee": "e", "requestsPerSecond": 800.0}], 400.0, seed=7)
for name, doc in (("paper-pairwise", pairwise), ("paper-dag", dag)):
    with open(f"examples/{name}.json", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
