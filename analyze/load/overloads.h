/*
 * overloads.h - C++ names are shown without their parameters, except where
 * two functions would then read the same though their parameters differ
 * (overloads): those get their parameters back, so that a report never
 * merges two functions by name.
 */
#ifndef IPSCOPE_OVERLOADS_H
#define IPSCOPE_OVERLOADS_H

#include <stdint.h>

#include "profile.h"

/* parameters[f]: string id of function f's name with parameters (its name
 * when it has none). Renames the functions of p whose names collide. */
void overloads_tell_apart(struct profile *p, const uint32_t *parameters);

#endif
