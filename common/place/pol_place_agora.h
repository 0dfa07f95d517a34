/*
 * pol_place_agora.h - the former names of the topology-aware placer
 * (pol_topo_place.h), kept only until contrib/sim/main.c builds its
 * placers with pol_placer_find(); include pol_topo_place.h in new code.
 */
#ifndef POL_PLACE_AGORA_H
#define POL_PLACE_AGORA_H

#include "pol_topo_place.h"

typedef pol_topo_place_t pol_agora_t;

#define pol_agora_create     pol_topo_place_create
#define pol_agora_destroy    pol_topo_place_destroy
#define pol_agora_place      pol_topo_place_req
#define pol_agora_score      pol_topo_place_score
#define pol_agora_last_score pol_topo_place_last_score
#define pol_place_agora      pol_topo_place_job

#endif
