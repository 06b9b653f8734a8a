/* OpenND's tunables: every environment variable libopennd, the provider
 * kit and the providers shipped with OpenND read, in one table with its
 * default and what it does. `ndinfo --params` prints it with the values in
 * effect (as `fi_info -e` does for libfabric); opennd(7) documents it.
 *
 * A variable is read only through this table: ParamText of a name the
 * table does not hold reads as unset (and says so once, at error level),
 * so no knob can exist that the table does not list. Variables are read
 * with secure_getenv: a set-user-ID or set-group-ID program ignores them. */
#pragma once

#include <cstddef>

#include "opennd/win32.h"

namespace opennd {

struct Param {
    const char *name;           /* OPENND_... */
    const char *default_value;  /* as text; "" when unset means "off" or "computed" (help says which) */
    const char *component;      /* libopennd, kit, ndsoft */
    const char *help;
};

/* The table, in the order ndinfo prints it. */
OPENND_API const Param *Params(size_t *count);

/* The variable's value if it is set and not empty, else nullptr. */
OPENND_API const char *ParamText(const char *name);

/* The value as a decimal number if it is set and is one, else `otherwise`. */
OPENND_API long ParamLong(const char *name, long otherwise);

}  // namespace opennd
