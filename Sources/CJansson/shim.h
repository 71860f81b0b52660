#ifndef NATIVEAUTH_CJANSSON_SHIM_H
#define NATIVEAUTH_CJANSSON_SHIM_H
#include <jansson.h>
#endif
