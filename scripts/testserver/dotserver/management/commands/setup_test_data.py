"""Creates the test user and clients; prints nothing secret that the tests don't already know."""
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from oauth2_provider.models import get_application_model

from dotserver.validator import ISSUED_SECRETS, record

USERNAME = "alice"
PASSWORD = "wonderland-password"
# A second person, for tests of several accounts at one server.
SECOND_USERNAME = "bob"
SECOND_PASSWORD = "builder-password-2"
PUBLIC_CLIENT = "nativeauth-public"
CONFIDENTIAL_CLIENT = "nativeauth-confidential"
CONFIDENTIAL_SECRET = "nativeauth-test-secret-0123456789"
DEVICE_CLIENT = "nativeauth-device"
# A workload: client credentials only (RFC 6749 §4.4).
SERVICE_CLIENT = "nativeauth-service"
SERVICE_SECRET = "nativeauth-service-secret-9876543210"
REDIRECTS = "http://127.0.0.1/callback http://[::1]/callback"
POST_LOGOUT = "http://127.0.0.1/logged-out"


class Command(BaseCommand):
    help = "Create the NativeAuth test user and OAuth clients (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--issuer", required=True)
        parser.add_argument("--output", required=True)

    def handle(self, *args, **options):
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=USERNAME)
        user.first_name, user.last_name, user.email = "Alice", "Liddell", "alice@example.test"
        user.set_password(PASSWORD)
        user.save()
        second, _ = User.objects.get_or_create(username=SECOND_USERNAME)
        second.first_name, second.last_name, second.email = "Bob", "Builder", "bob@example.test"
        second.set_password(SECOND_PASSWORD)
        second.save()

        Application = get_application_model()
        common = dict(redirect_uris=REDIRECTS, post_logout_redirect_uris=POST_LOGOUT, algorithm="RS256",
                      skip_authorization=False, user=user)
        Application.objects.filter(
            client_id__in=[PUBLIC_CLIENT, CONFIDENTIAL_CLIENT, DEVICE_CLIENT, SERVICE_CLIENT]).delete()
        Application.objects.create(
            name="NativeAuth public client", client_id=PUBLIC_CLIENT, client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE, client_secret="", **common)
        Application.objects.create(
            name="NativeAuth confidential client", client_id=CONFIDENTIAL_CLIENT,
            client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            client_secret=CONFIDENTIAL_SECRET, **common)
        Application.objects.create(
            name="NativeAuth device client", client_id=DEVICE_CLIENT, client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_DEVICE_CODE, client_secret="", **common)
        Application.objects.create(
            name="NativeAuth service client", client_id=SERVICE_CLIENT, client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS, client_secret=SERVICE_SECRET, **common)

        issuer = options["issuer"]
        with open(options["output"], "w") as out:
            json.dump({
                "issuer": issuer,
                "username": USERNAME,
                "password": PASSWORD,
                "second_username": SECOND_USERNAME,
                "second_password": SECOND_PASSWORD,
                "public_client_id": PUBLIC_CLIENT,
                "confidential_client_id": CONFIDENTIAL_CLIENT,
                "confidential_client_secret": CONFIDENTIAL_SECRET,
                "device_client_id": DEVICE_CLIENT,
                "service_client_id": SERVICE_CLIENT,
                "service_client_secret": SERVICE_SECRET,
                "device_authorization_endpoint": issuer + "/device-authorization/",
                "post_logout_redirect_uri": POST_LOGOUT,
            }, out, indent=2)
        # A new record of what the server hands out (the validator adds every code and token).
        ISSUED_SECRETS.write_text("")
        ISSUED_SECRETS.chmod(0o600)
        record(CONFIDENTIAL_SECRET, SERVICE_SECRET, PASSWORD, SECOND_PASSWORD)
