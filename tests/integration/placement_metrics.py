#!/usr/bin/env python3
"""placement_metrics.py - locality and fragmentation of GPU allocations.

Used by tests/integration/test_placement.sh.  Reads the agora-topo model
(JSON) and a log of polled `scontrol -d -o show job` output, and prints

  jobs=N multi=M mean_level=L straddle=S frag=F samples=K

where, for the jobs whose name starts with the given prefix:
  mean_level  mean locality level (0 NVLink island, 1 PCIe switch,
              2 socket, 3 node, 4 leaf, 5 cluster) of the jobs with >= 2
              GPUs, from the first poll that saw each job running;
  straddle    how many of those had a level above the best level their
              GPU count could have on that node type (e.g. 2 GPUs across
              islands on a node with 4-GPU islands);
  frag        mean, over the polls with at least one such job running, of
              the number of partly free locality groups (NVLink islands and
              PCIe switches of more than one GPU, sockets, nodes): a group
              is partly free when some but not all of its GPUs are free.

Usage:
  placement_metrics.py MODEL.json POLL.log PREFIX [TOPOLOGY.conf]
  placement_metrics.py --level MODEL.json NODE IDX   (prints one level)
"""
import json
import re
import sys


def ranges(s):
    out = []
    for part in s.split(','):
        if not part:
            continue
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def expand_hostlist(hl):
    m = re.match(r'^(.*)\[(.*)\]$', hl)
    if not m:
        return [hl]
    pre, body = m.groups()
    out = []
    for part in body.split(','):
        if '-' in part:
            a, b = part.split('-')
            w = len(a)
            out.extend('%s%0*d' % (pre, w, i)
                       for i in range(int(a), int(b) + 1))
        else:
            out.append(pre + part)
    return out


class Model:
    def __init__(self, path):
        d = json.load(open(path))
        self.types = {}
        self.node_type = {}
        for t in d['node_types']:
            g = t['gpu']
            n = len(g)
            lvl = [[0] * n for _ in range(n)]
            for i in range(n):
                for j in range(n):
                    if i == j or g[i]['island'] == g[j]['island']:
                        lvl[i][j] = 0
                    elif g[i]['pcie_switch'] >= 0 and \
                            g[i]['pcie_switch'] == g[j]['pcie_switch']:
                        lvl[i][j] = 1
                    elif g[i]['socket'] >= 0 and \
                            g[i]['socket'] == g[j]['socket']:
                        lvl[i][j] = 2
                    else:
                        lvl[i][j] = 3
            groups = []
            for key in ('island', 'pcie_switch', 'socket'):
                vals = {}
                for i in range(n):
                    if g[i][key] >= 0:
                        vals.setdefault(g[i][key], set()).add(i)
                for s in vals.values():
                    if len(s) > 1 and s not in groups:
                        groups.append(s)
            if set(range(n)) not in groups:
                groups.append(set(range(n)))
            # best level k GPUs can have on this type
            best = {}
            for k in range(1, n + 1):
                best[k] = min(self._lvl(lvl, c)
                              for c in self._subsets(n, k))
            self.types[t['name']] = (n, lvl, groups, best)
            for h in expand_hostlist(t.get('nodes', '')):
                self.node_type[h] = t['name']

    @staticmethod
    def _lvl(lvl, s):
        return max([lvl[i][j] for i in s for j in s] or [0])

    @staticmethod
    def _subsets(n, k):
        from itertools import combinations
        return combinations(range(n), k)

    def level(self, parts):
        """parts: {node: [gpu idx]}"""
        if len(parts) > 1:
            return None  # caller decides leaf/cluster
        (node, idx), = parts.items()
        n, lvl, _, _ = self.types[self.node_type[node]]
        return self._lvl(lvl, idx)

    def best(self, node, k):
        return self.types[self.node_type[node]][3].get(k, 3)


def leaves_of(topo_path):
    leaf = {}
    if not topo_path:
        return leaf
    for line in open(topo_path):
        m = re.match(r'\s*SwitchName=(\S+)\s+Nodes=(\S+)', line)
        if m:
            for h in expand_hostlist(m.group(2)):
                leaf[h] = m.group(1)
    return leaf


JOB_RE = re.compile(r'JobId=(\d+) .*?JobName=(\S+)')
ALLOC_RE = re.compile(r'Nodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=gpu(?::[^:(]+)?:(\d+)\(IDX:([0-9,-]+)\)')


def parse_polls(path, prefix):
    """-> list of snapshots, each {jobid: (name, {node: [idx]})}"""
    snaps, cur = [], None
    for line in open(path):
        if line.startswith('@'):
            cur = {}
            snaps.append(cur)
            continue
        if cur is None or 'JobState=RUNNING' not in line:
            continue
        m = JOB_RE.search(line)
        if not m or not m.group(2).startswith(prefix):
            continue
        parts = {}
        for nodes, _cnt, idx in ALLOC_RE.findall(line):
            for h in expand_hostlist(nodes):
                parts[h] = ranges(idx)
        if parts:
            cur[m.group(1)] = (m.group(2), parts)
    return snaps


def main(argv):
    if argv[1:2] == ['--level']:
        m = Model(argv[2])
        print(m.level({argv[3]: ranges(argv[4])}))
        return 0
    model = Model(argv[1])
    snaps = parse_polls(argv[2], argv[3])
    leaf = leaves_of(argv[4] if len(argv) > 4 else None)
    first = {}
    frag_sum, frag_n = 0, 0
    for snap in snaps:
        if not snap:
            continue
        for jid, (name, parts) in snap.items():
            first.setdefault(jid, parts)
        used = {}
        for _jid, (_n, parts) in snap.items():
            for h, idx in parts.items():
                used.setdefault(h, set()).update(idx)
        partly = 0
        for h, t in model.node_type.items():
            _n, _l, groups, _b = model.types[t]
            u = used.get(h, set())
            for g in groups:
                busy = len(g & u)
                if 0 < busy < len(g):
                    partly += 1
        frag_sum += partly
        frag_n += 1
    levels, straddle = [], 0
    for jid, parts in first.items():
        k = sum(len(v) for v in parts.values())
        if k < 2:
            continue
        if len(parts) > 1:
            ls = {leaf.get(h, '?') for h in parts}
            lv = 4 if len(ls) == 1 and '?' not in ls else 5
            best = 4
        else:
            lv = model.level(parts)
            best = model.best(next(iter(parts)), k)
        levels.append(lv)
        if lv > best:
            straddle += 1
    mean = sum(levels) / len(levels) if levels else 0.0
    frag = frag_sum / frag_n if frag_n else 0.0
    print('jobs=%d multi=%d mean_level=%.3f straddle=%d frag=%.3f samples=%d'
          % (len(first), len(levels), mean, straddle, frag, frag_n))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
