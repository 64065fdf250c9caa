/*
 * version.c - the agent's version, as bytes collect finds in the file before
 * preloading it (see formats/transport/agent_version.h). Nothing reads it at run time.
 */
#include "agent.h"
#include "agent_version.h"

AGENT_EXPORT __attribute__((used)) const char ipscope_agent_version[] = AGENT_VERSION_STRING;
