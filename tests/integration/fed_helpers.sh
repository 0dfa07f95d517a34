# fed_helpers.sh - test_fed.sh's helpers, sourced by it after the harness
# started (they read its W, t and on()): submitting, a job's winner and
# copies, the hold, and clearing every cluster between sections.
# shellcheck shell=bash
# shellcheck disable=SC2154 # W, t: test_fed.sh's
sub() { # sub ARGS... -> job id
	sbatch --parsable -A acct_a -N1 --gres=gpu:8 -t 10 "$@" --wrap 'sleep 120' | cut -d';' -f1
}
burst1() { # burst1 N: N one-GPU jobs of 300 s submitted back to back, their ids into ids
	local i
	ids=()
	for i in $(seq "$1"); do
		ids+=("$(sbatch --parsable -A acct_a -N1 --gres=gpu:1 -t 10 --wrap 'sleep 300' | cut -d';' -f1)")
	done
}
# scontrol -a (SHOW_ALL): a job pinned while held has only its origin
# copy, REVOKED (Clusters= leaves the origin out, the sibling waits for the
# release), and 24.11's slurmctld hides REVOKED records from every caller
# without SHOW_ALL (22.05 from non-operators only), as agorad and agoractl
# read them (doc/federation.md)
admin() { on 1 scontrol -a show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=//p'; }
# the cluster a job was pinned to, "" while undecided
winner() { admin "$1" | sed -n 's/^Agora: fed auction: won by \([^ ]*\) .*/\1/p'; }
wait_pinned() { # JOBID... : up to 20 s
	local j d=$(($(ms) + 20000))
	for j; do
		while [ -z "$(winner "$j")" ] && [ "$(ms)" -lt $d ]; do sleep 0.2; done
	done
}
# copies of a job that are not revoked (pending, running or ended: jobs
# here run 10 minutes, longer than the test), over all clusters (0 = lost)
copies() {
	local c n=0
	for c in 1 2 3; do
		on $c squeue --local -h -j "$1" -t all -o %T 2>/dev/null | grep -vq REVOKED && n=$((n + 1))
	done
	echo $n
}
# held at the origin (priority 0); a pinned origin copy is REVOKED (its
# sibling is elsewhere) and squeue shows no "Held" for it
held() { on 1 scontrol -a -o show job "$1" 2>/dev/null | grep -Eq ' Priority=0 .*JobState=(PENDING|REVOKED) '; }
not_held() { ! held "$1"; }
# cancel every job and wait (up to 30 s) until no cluster runs or queues
# one: under load a cancelled job can hold its GPUs for seconds, and the
# next section counts free GPUs
no_jobs() {
	local c
	for c in 1 2 3; do [ -z "$(on $c squeue --local -h -o %i 2>/dev/null)" ] || return 1; done
}
left_jobs() { # JOBID:STATE@cLUSTER of every job left, one line
	local c
	for c in 1 2 3; do on $c squeue --local -h -o "%i:%T@c$c" 2>/dev/null; done | tr '\n' ' '
}
# cancel_all: no job left on any cluster.  One scancel can cross a
# federation update in flight (CI once saw a job RUNNING on c2 30 s after
# it): what is left is cancelled again by id on every cluster every 5 s,
# for up to 40 s, and the log says which jobs needed it.
# no job for 3 s on end: on 22.05 a sibling copy pinned a few seconds
# before can arrive after the origin's cancel (copies arrive one a second:
# doc/evaluation.md, "Pinned is not arrived") and start there; CI once
# found none, then 67108893 PENDING at c2 with its origin CANCELLED
no_jobs_settled() {
	local i
	for i in 1 2 3 4 5 6; do
		no_jobs || return 1
		sleep 0.5
	done
}
cancel_all() {
	local c k left ids again=""
	for c in 1 2 3; do on $c scancel -u root 2>/dev/null; done
	for ((k = 0; k < 8; k++)); do
		wait_for 5 no_jobs && no_jobs_settled && break
		left=$(left_jobs)
		again="$again $left"
		ids=$(echo "$left" | tr ' ' '\n' | sed -n 's/:.*//p' | sort -u)
		[ -n "$ids" ] || continue
		# shellcheck disable=SC2086 # one word per id
		for c in 1 2 3; do on $c scancel $ids 2>/dev/null; done
	done
	if ! no_jobs; then
		echo "# cancel_all: jobs left after $k rounds of scancel: $(left_jobs)"
		for ids in $(left_jobs); do
			c=${ids##*@c}
			on "$c" scontrol show job "${ids%%:*}" 2>&1 | grep -Eo '(JobState|Reason|FedOrigin|FedViableSiblings|FedActiveSiblings)=[^ ]*' | tr '\n' ' ' | sed 's/^/#   /'
			echo
		done
	elif [ -n "$again" ]; then
		echo "# cancel_all: needed scancel again for:$again"
	fi
}
