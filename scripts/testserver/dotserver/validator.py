import os

from django.conf import settings
from oauth2_provider.oauth2_validators import OAuth2Validator

# Every secret the server hands out is appended here, one per line: scripts/test.sh searches all
# the output of the test suite for each of them (no token or secret may ever be printed).
ISSUED_SECRETS = settings.STATE / "issued-secrets"


def record(*secrets):
    lines = "".join(s + "\n" for s in secrets if s and "\n" not in s)
    if not lines:
        return
    fd = os.open(ISSUED_SECRETS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, lines.encode())
    finally:
        os.close(fd)


class Validator(OAuth2Validator):
    """Adds the standard profile and email claims to ID tokens and userinfo, and records every
    code and token it issues in ISSUED_SECRETS."""

    oidc_claim_scope = OAuth2Validator.oidc_claim_scope

    def get_additional_claims(self, request):
        user = request.user
        return {
            "name": user.get_full_name(),
            "preferred_username": user.get_username(),
            "email": user.email,
            "email_verified": True,
        }

    def save_authorization_code(self, client_id, code, request, *args, **kwargs):
        record(code.get("code"))
        return super().save_authorization_code(client_id, code, request, *args, **kwargs)

    def save_bearer_token(self, token, request, *args, **kwargs):
        record(token.get("access_token"), token.get("refresh_token"), token.get("id_token"))
        return super().save_bearer_token(token, request, *args, **kwargs)
