"""Settings for the test server: a full OIDC provider on 127.0.0.1 (see ../../../shared/FACTS.md).

Everything that changes per run comes from the environment, set by scripts/test-server:
NATIVEAUTH_TEST_STATE (directory for the database and key), NATIVEAUTH_TEST_ACCESS_TOKEN_SECONDS,
NATIVEAUTH_TEST_ISSUER (for the device verification pages), NATIVEAUTH_TEST_DEVICE_INTERVAL (seconds
between device polls; 1 by default so that tests are quick).
"""
import os
from pathlib import Path

STATE = Path(os.environ.get("NATIVEAUTH_TEST_STATE", Path(__file__).resolve().parents[3] / ".test-server"))

SECRET_KEY = "nativeauth-test-server-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
    "dotserver.apps.DotServerConfig",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "dotserver.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
# Tests sign in concurrently: wait for locks and take write locks up front. WAL mode (readers read during
# writes) is set once, by dotserver.apps, which also keeps a connection open (see there why).
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(STATE / "db.sqlite3"),
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Password hashing dominates a scripted login; the test user needs no strong hash.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

_key_file = STATE / "rsa.pem"
_issuer = os.environ.get("NATIVEAUTH_TEST_ISSUER", "http://127.0.0.1:8000/o")
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _key_file.read_text() if _key_file.exists() else "",
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    # By default the logout page deletes every token of the user for the client: all tests sign in
    # as the same user, so one test's logout would end the sessions of the tests running beside it
    # (seen under ThreadSanitizer, where they overlap more). NativeAuth revokes its own tokens
    # before it ends the session, and the logout test checks that revocation.
    "OIDC_RP_INITIATED_LOGOUT_DELETE_TOKENS": False,
    "PKCE_REQUIRED": True,
    # RFC 9700: `iss` in every authorization response (RFC 9207), S256 only, no implicit or password grant.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "ROTATE_REFRESH_TOKEN": True,
    # Device grant (RFC 8628): the person's page, with and without the code filled in.
    "OAUTH_DEVICE_VERIFICATION_URI": _issuer + "/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": _issuer + "/device/?user_code={user_code}",
    "DEVICE_FLOW_INTERVAL": int(os.environ.get("NATIVEAUTH_TEST_DEVICE_INTERVAL", "1")),
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("NATIVEAUTH_TEST_ACCESS_TOKEN_SECONDS", "3600")),
    "OAUTH2_VALIDATOR_CLASS": "dotserver.validator.Validator",
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Your name",
        "email": "Your email address",
        "read": "Read access",
        "notes:write": "Keep notes (the Notes API of Samples/NotesClient)",
    },
    "DEFAULT_SCOPES": ["openid"],
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
