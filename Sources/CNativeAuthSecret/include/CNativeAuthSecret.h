#ifndef NATIVEAUTH_SECRET_H
#define NATIVEAUTH_SECRET_H

// The freedesktop Secret Service through libsecret, in plain C types, for SecretServiceTokenStore.
//
// Why a C layer: libsecret's convenient functions are variadic and its attributes are GHashTables;
// here every call takes a NULL-terminated array of attribute name/value pairs, returns a status,
// and on failure a message to free with nativeauth_secret_free_string.
//
// Every call takes a cancel handle: the Swift side cancels it from another thread when the call's
// time is up, so that no D-Bus call (a keyring that never answers, an unlock prompt nobody sees)
// hangs. A service handle is used by one thread at a time.

#include <stddef.h>

enum {
    NATIVEAUTH_SECRET_OK = 0,
    NATIVEAUTH_SECRET_NOT_FOUND = 1,
    NATIVEAUTH_SECRET_LOCKED = 2,
    NATIVEAUTH_SECRET_NO_COLLECTION = 3,
    NATIVEAUTH_SECRET_UNAVAILABLE = 4,
    NATIVEAUTH_SECRET_CANCELLED = 5,
    NATIVEAUTH_SECRET_FAILED = 6,
};

typedef struct nativeauth_secret_service nativeauth_secret_service;
typedef struct nativeauth_secret_cancel nativeauth_secret_cancel;

nativeauth_secret_cancel *nativeauth_secret_cancel_new(void);
/// Cancels the call using the handle; safe from any thread, any number of times.
void nativeauth_secret_cancel_fire(nativeauth_secret_cancel *cancel);
void nativeauth_secret_cancel_free(nativeauth_secret_cancel *cancel);

/// Opens a session with the Secret Service on the session bus (secrets travel encrypted when the
/// service offers it). The process's session bus connection no longer exits the process when the
/// bus goes away.
int nativeauth_secret_open(nativeauth_secret_cancel *cancel, nativeauth_secret_service **service, char **message);
void nativeauth_secret_close(nativeauth_secret_service *service);

/// The collection behind the `default` alias: its label and whether it is locked.
int nativeauth_secret_default_collection(nativeauth_secret_service *service, nativeauth_secret_cancel *cancel,
                                         char **label, int *locked, char **message);

/// The secret of the most recently modified item matching `attributes` (name, value, ..., NULL).
/// NOT_FOUND when there is none; LOCKED when a matching item is locked. Free `bytes` with
/// nativeauth_secret_free_bytes (it is zeroed first).
int nativeauth_secret_lookup(nativeauth_secret_service *service, const char *const *attributes,
                             nativeauth_secret_cancel *cancel, unsigned char **bytes, size_t *length, char **message);

/// Stores `bytes` with `attributes` and `label` in the default collection, replacing the item with
/// the same attributes. LOCKED (and nothing is asked of the person) when the collection is locked.
int nativeauth_secret_store(nativeauth_secret_service *service, const char *const *attributes, const char *label,
                            const unsigned char *bytes, size_t length, const char *content_type,
                            nativeauth_secret_cancel *cancel, char **message);

/// Deletes every item matching `attributes`; `removed` counts them. LOCKED, deleting nothing, when
/// one of them is locked.
int nativeauth_secret_delete(nativeauth_secret_service *service, const char *const *attributes,
                             nativeauth_secret_cancel *cancel, int *removed, char **message);

/// The values of the attributes `wanted` (NULL-terminated) of every item matching `attributes`:
/// one row of `count(wanted)` strings per item, in `*values` (NULL-terminated; an attribute an item
/// lacks is ""). Free with nativeauth_secret_free_strings.
int nativeauth_secret_search(nativeauth_secret_service *service, const char *const *attributes,
                             const char *const *wanted, nativeauth_secret_cancel *cancel, char ***values,
                             char **message);

void nativeauth_secret_free_bytes(unsigned char *bytes, size_t length);
void nativeauth_secret_free_string(char *string);
void nativeauth_secret_free_strings(char **strings);

#endif
