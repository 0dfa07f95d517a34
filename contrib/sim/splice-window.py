#!/usr/bin/env python3
"""splice-window.py - a Philly window that is not in ../shared/traces, cut
from windows that are: the jobs submitted in [FROM, FROM + DAYS) of the
files given, which must cover that span together without a gap.

  contrib/sim/splice-window.py FROM DAYS OUT TRACE...

FROM is a date (YYYY-MM-DD, UTC midnight).  Each TRACE is named as in
../shared/traces (..._YYYY-MM-DD_Nwk.csv: it holds the jobs submitted in
[that day, that day + N weeks)); the name says what it covers, so a gap
between the files is found even where no job was submitted.  The rows
are copied unchanged, sorted by submit time (stable); where two files
cover the same time, the rows of the one named first are kept.  Example:
the 2017-10-02 and 2017-10-16 windows are contiguous, so

  contrib/sim/splice-window.py 2017-10-09 14 \\
      philly_pollux_jobs_2017-10-09_2wk.csv \\
      ../shared/traces/philly_pollux_jobs_2017-10-02_2wk.csv \\
      ../shared/traces/philly_pollux_jobs_2017-10-16_2wk.csv

writes the two weeks from 2017-10-09, a window the defaults were not
chosen on (doc/evaluation.md, "Held out").  Exit 2 with FILE:LINE: FIELD
on a bad row, a bad name or a span the files do not cover.
"""
import csv
import datetime as dt
import re
import sys

NAME = re.compile(r"_(\d{4}-\d{2}-\d{2})_(\d+)wk\.csv$")
FMT = "%Y-%m-%d %H:%M:%S"


def die(msg):
    sys.stderr.write("splice-window.py: %s\n" % msg)
    sys.exit(2)


def day(s, what):
    try:
        return dt.datetime.strptime(s, "%Y-%m-%d")
    except ValueError:
        die("%s: '%s': expected YYYY-MM-DD" % (what, s))


def main(argv):
    if len(argv) < 5:
        die("usage: splice-window.py FROM DAYS OUT TRACE...")
    t0 = day(argv[1], "FROM")
    try:
        days = int(argv[2])
    except ValueError:
        days = 0
    if days <= 0:
        die("DAYS: '%s': expected a whole number of days > 0" % argv[2])
    t1 = t0 + dt.timedelta(days=days)
    out, files = argv[3], argv[4:]
    spans, header, rows = [], None, []
    for i, f in enumerate(files):
        m = NAME.search(f)
        if not m:
            die("%s: name: expected ..._YYYY-MM-DD_Nwk.csv (what it covers)" % f)
        a = day(m.group(1), f + ": name")
        spans.append((a, a + dt.timedelta(weeks=int(m.group(2)))))
        try:
            fh = open(f, newline="")
        except OSError as e:
            die("%s: %s" % (f, e.strerror))
        with fh:
            r = csv.reader(fh)
            h = next(r, None)
            if not h or h[0] != "timestamp":
                die("%s:1: header: expected 'timestamp' first, got %r" % (f, h))
            if header is None:
                header = h
            elif h != header:
                die("%s:1: header: %r differs from %s's %r" % (f, h, files[0], header))
            for n, row in enumerate(r, start=2):
                if len(row) != len(header):
                    die("%s:%d: row: %d fields, the header has %d" % (f, n, len(row), len(header)))
                try:
                    t = dt.datetime.strptime(row[0], FMT)
                except ValueError:
                    die("%s:%d: timestamp: '%s': expected %s" % (f, n, row[0], "YYYY-MM-DD HH:MM:SS"))
                if not spans[i][0] <= t < spans[i][1]:
                    die("%s:%d: timestamp: '%s' is outside [%s, %s) that the name says it holds"
                        % (f, n, row[0], spans[i][0].date(), spans[i][1].date()))
                # the first file that covers t owns it
                own = next(k for k, (a, b) in enumerate(spans) if a <= t < b)
                if t0 <= t < t1 and own == i:
                    rows.append((t, len(rows), row))
    # the union of the files' spans must hold [t0, t1)
    at = t0
    for a, b in sorted(spans):
        if a <= at < b:
            at = b
    if at < t1:
        die("the files cover [%s, %s) only up to %s: no file holds %s"
            % (t0.date(), t1.date(), at, at.date()))
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for _, _, row in sorted(rows):
            w.writerow(row)
    sys.stderr.write("splice-window.py: %s: %d jobs submitted in [%s, %s)\n"
                     % (out, len(rows), t0.date(), t1.date()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
