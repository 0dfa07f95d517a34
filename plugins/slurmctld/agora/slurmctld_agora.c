/*
 * slurmctld/agora - shows what Agora decided where Slurm admins and users
 * already look: "scontrol show config" (section "Slurmctld Plugstack
 * Plugins Configuration") and agoractl, which reads the same RPC.
 *
 * Enabled with SlurmctldPlugstack=slurmctld/agora.  Each call reads the
 * view file sched/agora writes after its passes
 * (StateSaveLocation/agora_view.json) and turns it into key=value pairs:
 *   Apps=N, Leases=N, View=<time of the pass>
 *   Credit[<account>]=credit=C quota=Q usage=U GPU-h rho=R
 *   Lease[<job id>]=gpus=G until=<time> state=active|grace
 * Nothing here changes scheduling; a missing or unreadable view is shown
 * as such (never an error that stops slurmctld).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_time.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "agora_hold.h"
#include "slurmctld_agora.h"

const char plugin_name[] = "Agora decisions in scontrol show config";
const char plugin_type[] = "slurmctld/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void)
{
	debug("%s: loaded", plugin_type);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	return SLURM_SUCCESS;
}

static void add_pair(List l, const char *name, char *value /* taken */)
{
	config_key_pair_t *kp = xmalloc(sizeof(*kp));

	kp->name = xstrdup(name);
	kp->value = value;
	list_append(l, kp);
}

static double num(json_object *o, const char *key, double dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return dflt;
	return json_object_get_double(v);
}

extern void slurmctld_plugstack_p_get_config(config_plugin_params_t *p)
{
	char *path = NULL, *name = NULL, tbuf[32];
	json_object *root, *apps = NULL, *leases = NULL, *v;
	time_t t;
	size_t i, n;

	xstrcat(p->name, plugin_type);
	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location,
		   AGORA_VIEW_FILE);
	root = json_object_from_file(path);
	if (!root || !json_object_is_type(root, json_type_object)) {
		add_pair(p->key_pairs, "View",
			 xstrdup_printf("none yet (%s: %s)", path,
					errno ? strerror(errno) : "not JSON"));
		if (root)
			json_object_put(root);
		xfree(path);
		return;
	}
	xfree(path);
	t = (time_t) num(root, "time", 0);
	slurm_make_time_str(&t, tbuf, sizeof(tbuf));
	add_pair(p->key_pairs, "View", xstrdup(tbuf));
	json_object_object_get_ex(root, "apps", &apps);
	json_object_object_get_ex(root, "leases", &leases);
	n = apps && json_object_is_type(apps, json_type_array)
		    ? json_object_array_length(apps)
		    : 0;
	add_pair(p->key_pairs, "Apps", xstrdup_printf("%zu", n));
	for (i = 0; i < n; i++) {
		json_object *a = json_object_array_get_idx(apps, i);
		char *val = NULL;

		if (!json_object_object_get_ex(a, "name", &v))
			continue;
		xstrfmtcat(name, "Credit[%s]", json_object_get_string(v));
		xstrfmtcat(val, "credit=%.2f quota=%.2f usage=%.2f GPU-h",
			   num(a, "credit", 0), num(a, "quota", 0),
			   num(a, "usage", 0));
		if (json_object_object_get_ex(a, "rho", &v))
			xstrfmtcat(val, " rho=%.2f", json_object_get_double(v));
		add_pair(p->key_pairs, name, val);
		xfree(name);
	}
	n = leases && json_object_is_type(leases, json_type_array)
		    ? json_object_array_length(leases)
		    : 0;
	add_pair(p->key_pairs, "Leases", xstrdup_printf("%zu", n));
	for (i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(leases, i);
		const char *st = "active";

		if (json_object_object_get_ex(l, "state", &v))
			st = json_object_get_string(v);
		t = (time_t) num(l, "end", 0);
		slurm_make_time_str(&t, tbuf, sizeof(tbuf));
		xstrfmtcat(name, "Lease[%.0f]", num(l, "job", 0));
		add_pair(p->key_pairs, name,
			 xstrdup_printf("gpus=%.0f until=%s state=%s",
					num(l, "gpus", 0), tbuf, st));
		xfree(name);
	}
	json_object_put(root);
}
