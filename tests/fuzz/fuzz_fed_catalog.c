/*
 * Fuzz target: the federation's dataset catalog
 * (common/fed/pol_fed_catalog.c).  What parses must format, parse again
 * to the same catalog, and survive a placement pass and the transfer
 * times of every dataset to every cluster.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pol_fed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size), *text;
	pol_fed_catalog_t cat, again;
	pol_fed_place_result_t res;
	agora_err_t err;
	double *demand, supply[64];
	int d, c;

	if (!s)
		return 0;
	if (pol_fed_catalog_parse(s, "fuzz.json", &cat, &err) < 0) {
		free(s);
		return 0;
	}
	text = pol_fed_catalog_format(&cat);
	if (text) {
		if (pol_fed_catalog_parse(text, "formatted", &again, &err) <
			    0 ||
		    again.n_sites != cat.n_sites ||
		    again.n_datasets != cat.n_datasets)
			abort(); /* the writer's output must parse back */
		for (d = 0; d < cat.n_datasets; d++)
			if (again.datasets[d].where != cat.datasets[d].where ||
			    strcmp(again.datasets[d].name,
				   cat.datasets[d].name))
				abort();
		pol_fed_catalog_free(&again);
		free(text);
	}
	demand = calloc(cat.n_datasets ? (size_t) cat.n_datasets : 1,
			sizeof(*demand));
	if (demand) {
		for (d = 0; d < cat.n_datasets; d++) {
			demand[d] = (double) (d % 7) * 8.0;
			for (c = 0; c < cat.n_sites; c++)
				(void) pol_fed_transfer_s(&cat, d, c);
		}
		for (c = 0; c < cat.n_sites; c++)
			supply[c] = (double) (c % 3) * 64.0;
		if (pol_fed_place(&cat, demand, supply, 50, true, &res) == 0)
			pol_fed_place_result_free(&res);
		free(demand);
	}
	pol_fed_catalog_free(&cat);
	free(s);
	return 0;
}
