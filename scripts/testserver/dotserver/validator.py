from oauth2_provider.oauth2_validators import OAuth2Validator


class Validator(OAuth2Validator):
    """Adds the standard profile and email claims to ID tokens and userinfo."""

    oidc_claim_scope = OAuth2Validator.oidc_claim_scope

    def get_additional_claims(self, request):
        user = request.user
        return {
            "name": user.get_full_name(),
            "preferred_username": user.get_username(),
            "email": user.email,
            "email_verified": True,
        }
