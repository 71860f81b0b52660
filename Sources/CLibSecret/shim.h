#ifndef NATIVEAUTH_CLIBSECRET_SHIM_H
#define NATIVEAUTH_CLIBSECRET_SHIM_H
#include <libsecret/secret.h>
#endif
