/*
 * agora_select_hook_topo.c - Hook 2 from 23.11 on (agora_compat.h,
 * AGORA_HAVE_TOPO_EVAL_HOOK): route the stock cons_tres plugin's node
 * choice through agora_select_choose_nodes().
 *
 * 23.11 merged cons_common into cons_tres and dropped its callback table;
 * cons_tres's _select_nodes() now calls topology_g_eval_nodes(topo_eval)
 * (src/interfaces/topology.c, in libslurmfull), which dispatches to the
 * topology plugin's eval_nodes (default, tree or block).  The stock plugin
 * reaches that function through its own PLT, i.e. through one GOT slot in
 * the stock select_cons_tres.so that we dlopen()ed ourselves.  We point
 * that slot (and only that object's slot) at agora_eval_nodes_cb, which
 * narrows topo_eval->node_map with Agora's placement and then calls the
 * real topology_g_eval_nodes(), so the configured topology plugin (tree's
 * switch packing, block's block alignment) still decides on the narrowed
 * map.  The arguments are the 22.05 choose_nodes() ones gathered in one
 * struct, so agora_select_choose_nodes() is shared unchanged.
 *
 * Only slurmctld installs the hook; it runs under slurmctld's job and node
 * write locks.
 */
#define _GNU_SOURCE /* dlinfo() */

#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#if AGORA_HAVE_TOPO_EVAL_HOOK

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_TOPOLOGY

#include "agora_select.h"
#include "agora_select_hook.h"

#define EVAL_SYM "topology_g_eval_nodes"

typedef int (*eval_nodes_f)(topology_eval_t *topo_eval);

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static void **slots[4]; /* the stock plugin's GOT slots of EVAL_SYM */
static int slot_cnt = 0;
static void *slot_orig[4];       /* what they held before */
static bool hook_broken = false; /* logged once, run without hook */

/* RELRO range of the object loaded at base (dl_iterate_phdr callback) */
typedef struct {
	ElfW(Addr) base;
	uintptr_t lo, hi;
} relro_t;
static relro_t stock_relro; /* of the stock plugin, found at install */

/*
 * The topo_eval of the call in progress: agora_select_choose_nodes() calls
 * eval_orig() with the choose_nodes() arguments (possibly the narrowed map
 * and, on a retry, restored ones); eval_orig() passes them on in a copy of
 * the caller's struct, so the fields choose_nodes() has no argument for
 * (enforce_binding, first_pass, gres_per_job, trump_others, ...) reach the
 * topology plugin as cons_tres set them.
 */
static __thread topology_eval_t *cur_te = NULL;
/* cur_te as cons_tres passed it, so a retry starts from the same fields */
static __thread const topology_eval_t *cur_orig = NULL;

static int eval_orig(job_record_t *job_ptr, bitstr_t *node_map,
		     bitstr_t **avail_core, uint32_t min_nodes,
		     uint32_t max_nodes, uint32_t req_nodes,
		     avail_res_t **avail_res_array, uint16_t cr_type,
		     bool prefer_alloc_nodes, gres_mc_data_t *tres_mc_ptr)
{
	topology_eval_t te = *cur_orig;
	int rc;

	te.job_ptr = job_ptr;
	te.node_map = node_map;
	te.avail_core = avail_core;
	te.min_nodes = min_nodes;
	te.max_nodes = max_nodes;
	te.req_nodes = req_nodes;
	te.avail_res_array = avail_res_array;
	te.cr_type = cr_type;
	te.prefer_alloc_nodes = prefer_alloc_nodes;
	te.mc_ptr = tres_mc_ptr;
	rc = topology_g_eval_nodes(&te);
	*cur_te = te; /* what the topology plugin updated, as stock sees it */
	return rc;
}

static int agora_eval_nodes_cb(topology_eval_t *te)
{
	topology_eval_t *outer = cur_te, pristine = *te;
	const topology_eval_t *outer_orig = cur_orig;
	int rc;

	cur_te = te;
	cur_orig = &pristine;
	rc = agora_select_choose_nodes(eval_orig, te->job_ptr, te->node_map,
				       te->avail_core, te->min_nodes,
				       te->max_nodes, te->req_nodes,
				       te->avail_res_array, te->cr_type,
				       te->prefer_alloc_nodes, te->mc_ptr);
	cur_te = outer;
	cur_orig = outer_orig;
	return rc;
}

/* d_ptr of a dynamic entry: glibc relocates most in place, not all */
static uintptr_t dyn_ptr(const struct link_map *lm, ElfW(Addr) p)
{
	return (p < lm->l_addr) ? (uintptr_t) (p + lm->l_addr) : (uintptr_t) p;
}

/* The GOT slots of EVAL_SYM in the object of lm (JUMP_SLOT, GLOB_DAT). */
static int find_slots(const struct link_map *lm)
{
	const ElfW(Dyn) * d;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) * rel[2] = { NULL, NULL };
	size_t relsz[2] = { 0, 0 };
	int n = 0;

	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *) dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *) dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_JMPREL:
			rel[0] = (const void *) dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			relsz[0] = d->d_un.d_val;
			break;
		case DT_RELA:
			rel[1] = (const void *) dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relsz[1] = d->d_un.d_val;
			break;
		default:
			break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; rel[t] && i < relsz[t] / sizeof(ElfW(Rela));
		     i++) {
			const ElfW(Rela) *r = &rel[t][i];
			unsigned long type = ELF64_R_TYPE(r->r_info);
			const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(r->r_info)];

			if ((type != R_X86_64_JUMP_SLOT) &&
			    (type != R_X86_64_GLOB_DAT))
				continue;
			if (!ELF64_R_SYM(r->r_info) ||
			    strcmp(strtab + sym->st_name, EVAL_SYM))
				continue;
			if (n < (int) (sizeof(slots) / sizeof(slots[0])))
				slots[n++] = (void **) (lm->l_addr +
							r->r_offset);
		}
	}
	return n;
}

static int relro_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	relro_t *r = arg;

	if (info->dlpi_addr != r->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		/* the pages the loader made read-only, as glibc's
		 * _dl_protect_relro() rounds them: a partial last page stays
		 * writable, and so must stay after our write */
		if (ph->p_type == PT_GNU_RELRO) {
			uintptr_t pg = (uintptr_t) sysconf(_SC_PAGESIZE);
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

			r->lo = lo & ~(pg - 1);
			r->hi = (lo + ph->p_memsz) & ~(pg - 1);
		}
	}
	return 1;
}

/* Write a GOT slot, lifting RELRO (full RELRO, -z now) around the write. */
static bool slot_write(const relro_t *rr, void **slot, void *val)
{
	uintptr_t a = (uintptr_t) slot;
	uintptr_t pg = (uintptr_t) sysconf(_SC_PAGESIZE);
	void *page = (void *) (a & ~(pg - 1));
	bool ro = (a >= rr->lo) && (a < rr->hi);

	if (ro && mprotect(page, pg, PROT_READ | PROT_WRITE)) {
		error("%s: cannot make the stock plugin's GOT writable: %m",
		      plugin_type);
		return false;
	}
	__atomic_store_n(slot, val, __ATOMIC_RELEASE);
	if (ro)
		(void) mprotect(page, pg, PROT_READ);
	return true;
}

static bool hook_in_place(void)
{
	return slot_cnt && (__atomic_load_n(slots[0], __ATOMIC_ACQUIRE) ==
			    (void *) agora_eval_nodes_cb);
}

extern bool agora_hook_ensure(void *stock_handle)
{
	struct link_map *lm = NULL;
	bool ok = false;

	if (hook_in_place())
		return true;

	pthread_mutex_lock(&hook_lock);
	if (hook_broken || !stock_handle)
		goto out;
	if (dlinfo(stock_handle, RTLD_DI_LINKMAP, &lm) || !lm) {
		error("%s: no link map for the stock plugin (%s); node choice is stock cons_tres only",
		      plugin_type, dlerror());
		hook_broken = true;
		goto out;
	}
	if (!slot_cnt && !(slot_cnt = find_slots(lm))) {
#if defined(__x86_64__)
		error("%s: the stock plugin does not call %s through its GOT; node choice is stock cons_tres only",
		      plugin_type, EVAL_SYM);
#else
		error("%s: the node-choice hook reads x86-64 relocations only, not this architecture's; node choice is stock cons_tres only (GPU indices are still Agora's)",
		      plugin_type);
#endif
		hook_broken = true;
		goto out;
	}
	stock_relro = (relro_t){ lm->l_addr, 0, 0 };
	dl_iterate_phdr(relro_cb, &stock_relro);
	for (int i = 0; i < slot_cnt; i++) {
		void *cur = __atomic_load_n(slots[i], __ATOMIC_ACQUIRE);

		if (cur == (void *) agora_eval_nodes_cb)
			continue;
		slot_orig[i] = cur;
		if (!slot_write(&stock_relro, slots[i],
				(void *) agora_eval_nodes_cb)) {
			hook_broken = true;
			goto out;
		}
	}
	info("Agora node-choice hook installed (%s of the stock plugin, %d GOT slot%s)",
	     EVAL_SYM, slot_cnt, (slot_cnt == 1) ? "" : "s");
	ok = true;
out:
	pthread_mutex_unlock(&hook_lock);
	return ok;
}

extern void agora_hook_remove(void)
{
	pthread_mutex_lock(&hook_lock);
	for (int i = 0; i < slot_cnt; i++) {
		if (*slots[i] != (void *) agora_eval_nodes_cb)
			continue;
		/*
		 * The lazy-binding PLT target or the resolved address: either way
		 * the stock plugin calls topology_g_eval_nodes again.
		 */
		(void) slot_write(&stock_relro, slots[i], slot_orig[i]);
	}
	slot_cnt = 0;
	hook_broken = false;
	pthread_mutex_unlock(&hook_lock);
}

#endif /* AGORA_HAVE_TOPO_EVAL_HOOK */
