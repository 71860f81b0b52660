// The freedesktop Secret Service through libsecret: see include/CNativeAuthSecret.h.

// Linux only (the package depends on this target on Linux alone; `swift build` of every target on
// another platform compiles it empty).
#ifdef __linux__

#include "CNativeAuthSecret.h"

#include <libsecret/secret.h>
#include <string.h>

struct nativeauth_secret_service {
    // The context the service's proxy was created in: signals for it are queued here, and drained
    // after each call (nothing else runs this context).
    GMainContext *context;
    // The process's session bus, held while the service is.
    GDBusConnection *connection;
    SecretService *service;
};

struct nativeauth_secret_cancel {
    GCancellable *cancellable;
};

// Every item NativeAuth writes has these attributes. DONT_MATCH_NAME: searches do not require the
// schema's name, so that an item stored by another program (secret-tool) with the same attributes
// is found.
static const SecretSchema token_schema = {
    "org.nativeauth.TokenSet",
    SECRET_SCHEMA_DONT_MATCH_NAME,
    {
        {"application", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"issuer", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"client_id", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"account", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {NULL, 0},
    },
};

nativeauth_secret_cancel *nativeauth_secret_cancel_new(void) {
    nativeauth_secret_cancel *cancel = g_new0(nativeauth_secret_cancel, 1);
    cancel->cancellable = g_cancellable_new();
    return cancel;
}

void nativeauth_secret_cancel_fire(nativeauth_secret_cancel *cancel) { g_cancellable_cancel(cancel->cancellable); }

void nativeauth_secret_cancel_free(nativeauth_secret_cancel *cancel) {
    if (cancel == NULL) return;
    g_object_unref(cancel->cancellable);
    g_free(cancel);
}

// Maps a GError to a status, hands its message over and frees it.
static int failure(GError *error, char **message) {
    int status = NATIVEAUTH_SECRET_FAILED;
    if (error == NULL) {
        *message = g_strdup("the Secret Service call failed without saying why");
        return status;
    }
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        status = NATIVEAUTH_SECRET_CANCELLED;
    } else if (g_error_matches(error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED)) {
        status = NATIVEAUTH_SECRET_LOCKED;
    } else if ((error->domain == G_DBUS_ERROR &&
                (error->code == G_DBUS_ERROR_SERVICE_UNKNOWN || error->code == G_DBUS_ERROR_NAME_HAS_NO_OWNER ||
                 error->code == G_DBUS_ERROR_NO_REPLY || error->code == G_DBUS_ERROR_DISCONNECTED ||
                 error->code == G_DBUS_ERROR_TIMEOUT || error->code == G_DBUS_ERROR_NO_SERVER ||
                 error->code == G_DBUS_ERROR_FILE_NOT_FOUND || error->code == G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND)) ||
               (error->domain == G_IO_ERROR &&
                (error->code == G_IO_ERROR_CLOSED || error->code == G_IO_ERROR_NOT_FOUND ||
                 error->code == G_IO_ERROR_CONNECTION_REFUSED || error->code == G_IO_ERROR_TIMED_OUT ||
                 error->code == G_IO_ERROR_BROKEN_PIPE || error->code == G_IO_ERROR_CONNECTION_CLOSED ||
                 error->code == G_IO_ERROR_FAILED || error->code == G_IO_ERROR_INVALID_ARGUMENT))) {
        // No bus, no Secret Service on it, the daemon gone or not answering.
        status = NATIVEAUTH_SECRET_UNAVAILABLE;
    }
    if (g_dbus_error_is_remote_error(error)) g_dbus_error_strip_remote_error(error);
    *message = g_strdup(error->message);
    g_error_free(error);
    return status;
}

static void drain(GMainContext *context) {
    while (g_main_context_iteration(context, FALSE)) {
    }
}

int nativeauth_secret_open(nativeauth_secret_cancel *cancel, nativeauth_secret_service **result, char **message) {
    GError *error = NULL;
    *result = NULL;
    GMainContext *context = g_main_context_new();
    g_main_context_push_thread_default(context);
    // The process's session bus connection (libsecret's proxies cannot be given a connection of
    // their own). By default GLib exits the process when that connection closes; a keyring that
    // goes away must be an error instead.
    GDBusConnection *connection = g_bus_get_sync(G_BUS_TYPE_SESSION, cancel->cancellable, &error);
    SecretService *service = NULL;
    if (connection != NULL) {
        g_dbus_connection_set_exit_on_close(connection, FALSE);
        service = secret_service_open_sync(SECRET_TYPE_SERVICE, NULL, SECRET_SERVICE_OPEN_SESSION, cancel->cancellable,
                                           &error);
    }
    g_main_context_pop_thread_default(context);
    if (service == NULL) {
        if (connection != NULL) g_object_unref(connection);
        drain(context);
        g_main_context_unref(context);
        int status = failure(error, message);
        return status == NATIVEAUTH_SECRET_FAILED ? NATIVEAUTH_SECRET_UNAVAILABLE : status;
    }
    nativeauth_secret_service *handle = g_new0(nativeauth_secret_service, 1);
    handle->context = context;
    handle->connection = connection;
    handle->service = service;
    *result = handle;
    return NATIVEAUTH_SECRET_OK;
}

void nativeauth_secret_close(nativeauth_secret_service *handle) {
    if (handle == NULL) return;
    g_main_context_push_thread_default(handle->context);
    g_object_unref(handle->service);
    g_object_unref(handle->connection);
    g_main_context_pop_thread_default(handle->context);
    drain(handle->context);
    g_main_context_unref(handle->context);
    g_free(handle);
}

static GHashTable *attribute_table(const char *const *pairs) {
    GHashTable *table = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t index = 0; pairs[index] != NULL && pairs[index + 1] != NULL; index += 2) {
        g_hash_table_insert(table, (gpointer)pairs[index], (gpointer)pairs[index + 1]);
    }
    return table;
}

static void enter(nativeauth_secret_service *handle) { g_main_context_push_thread_default(handle->context); }

static void leave(nativeauth_secret_service *handle) {
    g_main_context_pop_thread_default(handle->context);
    drain(handle->context);
}

// The default collection, or NULL with a status.
static SecretCollection *default_collection(nativeauth_secret_service *handle, GCancellable *cancellable,
                                            int *status, char **message) {
    GError *error = NULL;
    SecretCollection *collection = secret_collection_for_alias_sync(
        handle->service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, cancellable, &error);
    if (collection == NULL) {
        if (error != NULL) {
            *status = failure(error, message);
        } else {
            *status = NATIVEAUTH_SECRET_NO_COLLECTION;
            *message = g_strdup("the Secret Service has no default collection (no login keyring)");
        }
    }
    return collection;
}

int nativeauth_secret_default_collection(nativeauth_secret_service *handle, nativeauth_secret_cancel *cancel,
                                         char **label, int *locked, char **message) {
    int status = NATIVEAUTH_SECRET_OK;
    enter(handle);
    SecretCollection *collection = default_collection(handle, cancel->cancellable, &status, message);
    if (collection != NULL) {
        *label = secret_collection_get_label(collection);
        *locked = secret_collection_get_locked(collection) ? 1 : 0;
        g_object_unref(collection);
    }
    leave(handle);
    return status;
}

// Whether `error` says that an object the call was about is gone (another process deleted an
// item between the search and the loading of its properties).
static gboolean vanished(const GError *error) {
    if (error == NULL) return FALSE;
    if (g_error_matches(error, SECRET_ERROR, SECRET_ERROR_NO_SUCH_OBJECT)) return TRUE;
    gchar *remote = g_dbus_error_get_remote_error(error);
    gboolean gone = remote != NULL && (g_str_equal(remote, "org.freedesktop.Secret.Error.NoSuchObject") ||
                                       g_str_equal(remote, "org.freedesktop.DBus.Error.UnknownObject") ||
                                       g_str_equal(remote, "org.freedesktop.DBus.Error.UnknownMethod"));
    g_free(remote);
    return gone || strstr(error->message, "No such secret item") != NULL;
}

// Every item matching `pairs`, locked ones included, with secrets loaded when `secrets` (for the
// unlocked ones); NULL with a status on failure (an empty list is NULL with OK). A search that
// raced with another process deleting one of the items is run again.
static GList *search(nativeauth_secret_service *handle, const char *const *pairs, gboolean secrets,
                     GCancellable *cancellable, int *status, char **message) {
    GHashTable *attributes = attribute_table(pairs);
    SecretSearchFlags flags = SECRET_SEARCH_ALL | (secrets ? SECRET_SEARCH_LOAD_SECRETS : 0);
    GList *items = NULL;
    GError *error = NULL;
    for (int attempt = 0; attempt < 5; attempt++) {
        g_clear_error(&error);
        items = secret_service_search_sync(handle->service, &token_schema, attributes, flags, cancellable, &error);
        if (error == NULL || !vanished(error)) break;
    }
    g_hash_table_unref(attributes);
    *status = NATIVEAUTH_SECRET_OK;
    if (error != NULL) *status = failure(error, message);
    return items;
}

static gboolean any_locked(GList *items) {
    for (GList *item = items; item != NULL; item = item->next) {
        if (secret_item_get_locked(item->data)) return TRUE;
    }
    return FALSE;
}

static const char *locked_message = "the keyring collection holding the tokens is locked";

int nativeauth_secret_lookup(nativeauth_secret_service *handle, const char *const *pairs,
                             nativeauth_secret_cancel *cancel, unsigned char **bytes, size_t *length,
                             char **message) {
    int status = NATIVEAUTH_SECRET_OK;
    *bytes = NULL;
    *length = 0;
    enter(handle);
    GList *items = search(handle, pairs, TRUE, cancel->cancellable, &status, message);
    if (status == NATIVEAUTH_SECRET_OK) {
        SecretItem *newest = NULL;
        for (GList *item = items; item != NULL; item = item->next) {
            if (newest == NULL || secret_item_get_modified(item->data) > secret_item_get_modified(newest)) {
                newest = item->data;
            }
        }
        if (newest == NULL) {
            status = NATIVEAUTH_SECRET_NOT_FOUND;
        } else if (secret_item_get_locked(newest)) {
            status = NATIVEAUTH_SECRET_LOCKED;
            *message = g_strdup(locked_message);
        } else {
            SecretValue *value = secret_item_get_secret(newest);
            if (value == NULL) {
                status = NATIVEAUTH_SECRET_FAILED;
                *message = g_strdup("the Secret Service returned the item without its secret");
            } else {
                gsize size = 0;
                const gchar *data = secret_value_get(value, &size);
                *bytes = g_malloc(size > 0 ? size : 1);
                memcpy(*bytes, data, size);
                *length = size;
                secret_value_unref(value);
            }
        }
    }
    g_list_free_full(items, g_object_unref);
    leave(handle);
    return status;
}

int nativeauth_secret_store(nativeauth_secret_service *handle, const char *const *pairs, const char *label,
                            const unsigned char *bytes, size_t length, const char *content_type,
                            nativeauth_secret_cancel *cancel, char **message) {
    int status = NATIVEAUTH_SECRET_OK;
    enter(handle);
    // A locked collection would make the service prompt for its password; a prompt nobody can see
    // would hang, so a locked collection is an error here instead.
    SecretCollection *collection = default_collection(handle, cancel->cancellable, &status, message);
    if (collection != NULL) {
        if (secret_collection_get_locked(collection)) {
            status = NATIVEAUTH_SECRET_LOCKED;
            *message = g_strdup(locked_message);
        } else {
            GError *error = NULL;
            GHashTable *attributes = attribute_table(pairs);
            SecretValue *value = secret_value_new((const gchar *)bytes, (gssize)length, content_type);
            if (!secret_service_store_sync(handle->service, &token_schema, attributes,
                                           g_dbus_proxy_get_object_path(G_DBUS_PROXY(collection)), label, value,
                                           cancel->cancellable, &error)) {
                status = failure(error, message);
            }
            secret_value_unref(value);
            g_hash_table_unref(attributes);
        }
        g_object_unref(collection);
    }
    leave(handle);
    return status;
}

int nativeauth_secret_delete(nativeauth_secret_service *handle, const char *const *pairs,
                             nativeauth_secret_cancel *cancel, int *removed, char **message) {
    int status = NATIVEAUTH_SECRET_OK;
    *removed = 0;
    enter(handle);
    GList *items = search(handle, pairs, FALSE, cancel->cancellable, &status, message);
    if (status == NATIVEAUTH_SECRET_OK && any_locked(items)) {
        status = NATIVEAUTH_SECRET_LOCKED;
        *message = g_strdup(locked_message);
    }
    for (GList *item = items; item != NULL && status == NATIVEAUTH_SECRET_OK; item = item->next) {
        GError *error = NULL;
        if (secret_item_delete_sync(item->data, cancel->cancellable, &error)) {
            *removed += 1;
        } else if (vanished(error)) {
            g_clear_error(&error);  // deleted by another process meanwhile
        } else {
            status = failure(error, message);
        }
    }
    g_list_free_full(items, g_object_unref);
    leave(handle);
    return status;
}

int nativeauth_secret_search(nativeauth_secret_service *handle, const char *const *pairs, const char *const *wanted,
                             nativeauth_secret_cancel *cancel, char ***values, char **message) {
    int status = NATIVEAUTH_SECRET_OK;
    *values = NULL;
    enter(handle);
    GList *items = search(handle, pairs, FALSE, cancel->cancellable, &status, message);
    if (status == NATIVEAUTH_SECRET_OK) {
        GPtrArray *rows = g_ptr_array_new();
        for (GList *item = items; item != NULL; item = item->next) {
            GHashTable *attributes = secret_item_get_attributes(item->data);
            for (size_t index = 0; wanted[index] != NULL; index++) {
                const gchar *value = attributes != NULL ? g_hash_table_lookup(attributes, wanted[index]) : NULL;
                g_ptr_array_add(rows, g_strdup(value != NULL ? value : ""));
            }
            if (attributes != NULL) g_hash_table_unref(attributes);
        }
        g_ptr_array_add(rows, NULL);
        *values = (char **)g_ptr_array_free(rows, FALSE);
    }
    g_list_free_full(items, g_object_unref);
    leave(handle);
    return status;
}

void nativeauth_secret_free_bytes(unsigned char *bytes, size_t length) {
    if (bytes == NULL) return;
    explicit_bzero(bytes, length);
    g_free(bytes);
}

void nativeauth_secret_free_string(char *string) { g_free(string); }

void nativeauth_secret_free_strings(char **strings) { g_strfreev(strings); }

#endif
