from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import urls as oauth2_urls
from oauth2_provider import views as oauth2_views

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # OpenID Connect RP-Initiated Logout 1.0 §2: the OP MUST accept the logout request by POST.
    # django-oauth-toolkit answers a POST only with a Django CSRF token, which a client's request
    # cannot carry; NativeAuth posts the ID token (keeping it out of argv and browser history), so
    # the view is exempt here, before the package's own route.
    path("o/logout/", csrf_exempt(oauth2_views.RPInitiatedLogoutView.as_view()), name="rp-initiated-logout"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414's path-component form at the root: /.well-known/oauth-authorization-server/o
    path("", include((oauth2_urls.metadata_urlpatterns, "oauth2_metadata"))),
]
