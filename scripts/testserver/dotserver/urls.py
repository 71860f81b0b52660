from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import urls as oauth2_urls

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414's path-component form at the root: /.well-known/oauth-authorization-server/o
    path("", include((oauth2_urls.metadata_urlpatterns, "oauth2_metadata"))),
]
