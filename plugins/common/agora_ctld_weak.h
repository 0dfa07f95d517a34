/*
 * agora_ctld_weak.h - the libslurmfull symbols Agora's select wrapper uses
 * only inside slurmctld, as weak references.
 *
 * Slurm's own commands and daemons link libslurmfull, which defines them.
 * Programs linked with the public libslurm (agoractl, agorad, a site's
 * own tools) load the select plugin too, to unpack job and node records,
 * and lack them: as strong references they made dlopen fail there (the
 * plugins bind with -z now), libslurm printed an "undefined symbol" error
 * and fell back to the stock plugin.  As weak references they resolve to
 * NULL in such a program, where the wrapper only forwards to the stock
 * plugin (its topology code runs only in slurmctld: running_in_slurmctld,
 * which the public libslurm exports).  contrib/slurm-src/check-plugin-deps
 * still checks at build time that slurmctld and libslurmfull define every
 * one of them.  Include after the Slurm headers.
 */
#ifndef AGORA_CTLD_WEAK_H
#define AGORA_CTLD_WEAK_H

#pragma weak bit_size
#pragma weak bit_test
#pragma weak bitmap2node_name
#pragma weak get_extra_conf_path
#pragma weak gres_build_id
#pragma weak list_count
#pragma weak list_iterator_create
#pragma weak list_iterator_destroy
#pragma weak list_next
#pragma weak node_record_count
#pragma weak node_record_table_ptr
#pragma weak resv_list
#pragma weak switch_record_cnt
#pragma weak switch_record_table

#endif
