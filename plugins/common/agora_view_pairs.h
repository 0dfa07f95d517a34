/*
 * agora_view_pairs.h - Agora's decisions as key=value pairs where Slurm
 * admins and users already look ("scontrol show config") and agoractl,
 * which reads the same RPC.  The host differs per release
 * (agora_compat.h): 22.05 SlurmctldPlugstack=slurmctld/agora (section
 * "Slurmctld Plugstack Plugins Configuration"); 23.02 removed it, so on
 * 24.11 the select/cons_tres wrapper answers SELECT_CONFIG_INFO with them
 * (section "Select Plugin Configuration"; stock cons_tres has none).
 *
 * Each call reads the view file Agora's scheduler writes after its passes
 * (StateSaveLocation/agora_view.json, common/base/agora_view.h):
 *   View=<time of the pass>  Apps=N
 *   Credit[<app>]=credit=C quota=Q usage=U GPU-h rho=R      (per app)
 *   Leases=N  Lease[<job id>]=gpus=G until=<time> state=active|grace
 * Nothing here changes scheduling.
 *
 * Cheap: the file is parsed only when it changed (device, inode, size,
 * mtime and ctime to the nanosecond, as fstat() saw the file parsed), or
 * when PrivateData or StateSaveLocation changed; otherwise the rendered
 * pairs of the last parse are copied.  A debug line counts parses against
 * calls ("parse N of M calls").
 *
 * Injection-proof: app names come from users (an account, a user name,
 * or with AppDefinition=name_prefix the prefix of a job name).  They are
 * printed only sanitised (common/base/agora_sanitize.h): bytes outside
 * [A-Za-z0-9._+@:/-] as \xHH, at most 64 bytes (longer names are cut and
 * end in ~<hash>), so no name can add a line or a key to the output.
 *
 * PrivateData: "scontrol show config" is answered for any user, and
 * neither host has the caller's identity (22.05: _slurm_rpc_dump_conf() ->
 * _fill_ctld_conf() -> slurmctld_plugstack_g_get_config() -> get_config(p);
 * 24.11: _fill_ctld_conf() -> select_g_get_info_from_plugin(
 * SELECT_CONFIG_INFO); no slurm_msg_t, no uid).  Every caller, root
 * included, therefore gets the same pairs, and with PrivateData they are
 * the ones fit for the least privileged user:
 *   - PrivateData with usage, accounts, users or jobs: no per-app rows
 *     (names, credit, quota, usage, rho); "Apps=N" and a notice
 *     "Credit=hidden: ..." instead.
 *   - PrivateData with jobs: leases without job ids (Lease[#1], ...;
 *     GPUs, end and state stay) and a notice "LeaseJobs=hidden: ...".
 * root and SlurmUser see everything with agoractl on a host that can read
 * StateSaveLocation (the controller): it reads the file itself.
 *
 * A missing or bad view file gives one pair, View=unavailable: <file>:
 * <error> (with line for JSON errors); malformed entries are left out and
 * counted in ViewSkipped=.  Never an error that stops slurmctld.
 *
 * Include after config.h and agora_compat.h.
 */
#ifndef AGORA_VIEW_PAIRS_H
#define AGORA_VIEW_PAIRS_H

/*
 * Append the pairs (config_key_pair_t, xmalloc'd) to key_pairs.
 * who IN - the plugin, for debug lines
 */
extern void agora_view_pairs_append(const char *who, List key_pairs);

/* Free the cache (the plugin's fini()). */
extern void agora_view_pairs_fini(void);

#endif /* AGORA_VIEW_PAIRS_H */
