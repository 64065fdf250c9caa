/*
 * agent_version.h - how collect recognises an agent built with it. The agent
 * carries AGENT_VERSION_STRING as bytes in its file (collect/agent/version.c);
 * collect finds the prefix in the file it is about to preload and compares
 * what follows with its own, so an agent from another version or build is
 * refused with a message instead of running the program unprofiled or
 * misreading the shared memory layout.
 */
#ifndef IPSCOPE_AGENT_VERSION_H
#define IPSCOPE_AGENT_VERSION_H

#include "ipscope_revision.h"

#define AGENT_VERSION_PREFIX "IPSCOPE_AGENT_VERSION="
#define AGENT_VERSION_STRING AGENT_VERSION_PREFIX IPSCOPE_VERSION " " IPSCOPE_REVISION

#endif
