#!/usr/bin/env python3
"""Checks NativeAuth's sandbox authorization server with a client nobody here wrote: Authlib.

    check-sandbox-authlib.py ISSUER

The sandbox must run with --auto-approve (`nativeauth-demo sandbox --auto-approve`). Authlib signs in
with the authorization code flow and PKCE S256, validates the ID token (signature against the
JWKS, iss, aud, exp, nonce, at_hash) with its own JOSE code, reads userinfo, refreshes (and sees
the rotated refresh token refused), revokes, ends the session, and runs the device flow by hand.
Exits non-zero with a message at the first thing that is wrong.
"""
import secrets
import sys
import urllib.parse

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

CLIENT_ID = "sandbox-client"
REDIRECT_URI = "http://127.0.0.1:8765/callback"


def fail(message):
    print(f"check-sandbox-authlib: {message}", file=sys.stderr)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def main():
    if len(sys.argv) != 2:
        fail("usage: check-sandbox-authlib.py ISSUER")
    issuer = sys.argv[1].rstrip("/")
    metadata = requests.get(issuer + "/.well-known/openid-configuration", timeout=10).json()
    expect(metadata["issuer"] == issuer, f"discovery names issuer {metadata['issuer']}, not {issuer}")
    expect(metadata.get("authorization_response_iss_parameter_supported") is True, "no RFC 9207 flag")
    for key in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri",
                "end_session_endpoint", "revocation_endpoint", "device_authorization_endpoint"):
        expect(key in metadata, f"discovery lacks {key}")
    rfc8414 = requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=10).json()
    expect(rfc8414["issuer"] == issuer, "the RFC 8414 document differs")

    # Authorization code with PKCE, as Authlib builds it.
    session = OAuth2Session(CLIENT_ID, scope="openid profile email", redirect_uri=REDIRECT_URI,
                            code_challenge_method="S256", token_endpoint_auth_method="none")
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, state = session.create_authorization_url(metadata["authorization_endpoint"],
                                                  code_verifier=verifier, nonce=nonce)
    answer = requests.get(url, allow_redirects=False, timeout=10)
    expect(answer.status_code in (302, 303), f"authorize answered {answer.status_code}, not a redirect")
    location = answer.headers["Location"]
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    expect(location.startswith(REDIRECT_URI + "?"), f"redirected to {location}")
    expect(query.get("state") == state, "state did not come back")
    expect(query.get("iss") == issuer, "iss did not come back (RFC 9207)")
    token = session.fetch_token(metadata["token_endpoint"], authorization_response=location,
                                code_verifier=verifier)
    expect(token.get("token_type", "").lower() == "bearer", f"token_type {token.get('token_type')}")
    for key in ("access_token", "refresh_token", "id_token", "expires_in"):
        expect(key in token, f"the token answer lacks {key}")

    # The ID token, validated by Authlib's JOSE implementation.
    jwks = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    claims = jwt.decode(token["id_token"], jwks, claims_cls=CodeIDToken,
                        claims_options={"iss": {"essential": True, "value": issuer}},
                        claims_params={"nonce": nonce, "client_id": CLIENT_ID,
                                       "access_token": token["access_token"]})
    claims.validate(leeway=5)
    expect(claims["aud"] == CLIENT_ID, "aud is not the client")
    expect(claims["sub"] == "sandbox-user-alice", f"sub is {claims['sub']}")
    alg = jwt.decode(token["id_token"], jwks).header["alg"]
    expect(alg in metadata["id_token_signing_alg_values_supported"], f"alg {alg} is not advertised")

    userinfo = session.get(metadata["userinfo_endpoint"], timeout=10).json()
    expect(userinfo["sub"] == claims["sub"], "userinfo's sub differs from the ID token's")
    expect(userinfo.get("email") == "alice@example.test", "no email claim")
    resource = session.get(issuer + "/resource", timeout=10)
    expect(resource.status_code == 200, f"the resource answered {resource.status_code}")

    # Refresh with rotation: the old refresh token is refused afterwards.
    old_refresh = token["refresh_token"]
    refreshed = session.refresh_token(metadata["token_endpoint"], refresh_token=old_refresh)
    expect(refreshed["access_token"] != token["access_token"], "refresh returned the same access token")
    expect(refreshed.get("refresh_token") not in (None, old_refresh), "the refresh token did not rotate")
    reuse = requests.post(metadata["token_endpoint"], data={"grant_type": "refresh_token", "client_id": CLIENT_ID,
                                                           "refresh_token": old_refresh}, timeout=10)
    expect(reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant", "a rotated token was accepted")

    # Revocation (RFC 7009), then the access token no longer works.
    revoked = session.revoke_token(metadata["revocation_endpoint"], token=refreshed["refresh_token"],
                                   token_type_hint="refresh_token")
    expect(revoked.status_code == 200, f"revocation answered {revoked.status_code}")
    gone = requests.get(issuer + "/resource", headers={"Authorization": "Bearer " + refreshed["access_token"]},
                        timeout=10)
    expect(gone.status_code == 401, "the access token survived the revocation of its refresh token")

    # RP-Initiated Logout back to the client.
    logout = requests.get(metadata["end_session_endpoint"], allow_redirects=False, timeout=10, params={
        "id_token_hint": token["id_token"], "post_logout_redirect_uri": REDIRECT_URI, "state": "bye"})
    expect(logout.status_code in (302, 303) and logout.headers["Location"] == REDIRECT_URI + "?state=bye",
           f"end_session answered {logout.status_code} {logout.headers.get('Location')}")

    # The device flow (RFC 8628), approved at once by --auto-approve.
    device = requests.post(metadata["device_authorization_endpoint"],
                           data={"client_id": CLIENT_ID, "scope": "openid"}, timeout=10).json()
    for key in ("device_code", "user_code", "verification_uri", "expires_in"):
        expect(key in device, f"the device answer lacks {key}")
    polled = requests.post(metadata["token_endpoint"], timeout=10, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": device["device_code"],
        "client_id": CLIENT_ID}).json()
    expect("access_token" in polled, f"the device code was not redeemed: {polled}")
    print(f"authlib: sandbox at {issuer} passed (ID tokens {alg})")


if __name__ == "__main__":
    main()
