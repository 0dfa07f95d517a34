# shellcheck shell=bash
# tests/integration/slurm_path.sh - sourced by tests/integration/lib.sh and
# tests/load/lib.sh.  AGORA_DC_SLURM=24.11 (agora-dc --slurm): the tests'
# own Slurm commands are those of that release's prefix, like the
# harness' daemons (contrib/slurm-src/agora-slurm-src --release 24.11
# built it); a 22.05 client cannot talk to a 24.11 slurmctld.
if [ -n "${AGORA_DC_SLURM:-}" ] && [ "$AGORA_DC_SLURM" != 22.05 ]; then
	_agora_prefix=$("$(dirname "${BASH_SOURCE[0]}")/../../contrib/slurm-src/agora-slurm-src" -q \
		--release "$AGORA_DC_SLURM" | tail -1)
	_agora_prefix=${_agora_prefix##*SLURM_PREFIX=}
	[ -x "$_agora_prefix/bin/sbatch" ] && PATH=$_agora_prefix/bin:$PATH && export PATH
	unset _agora_prefix
fi
