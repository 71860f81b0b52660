#!/usr/bin/env python3
"""Plays the person's part of a sign-in against the test server, like a browser would.

    scripted-browser.py [--deny] [--print-callback] AUTHORIZATION_URL
    scripted-browser.py --device [--deny] [--user-code CODE] VERIFICATION_URL

It opens the authorization URL, signs in through the Django login form (with its CSRF token),
approves consent (or denies it with --deny), and follows the final redirect to the app's
loopback receiver. With --print-callback it prints that redirect URL on stdout instead of
following it. Usable as $BROWSER (the URL is the last argument).

With --device it plays the person on the device verification page (RFC 8628): it signs in,
enters the user code (from --user-code, or the page's `user_code` parameter when the URL is the
complete verification URI), and accepts (or denies) the device.

The user comes from NATIVEAUTH_TEST_USERNAME / NATIVEAUTH_TEST_PASSWORD, else from the test
server's env.json (scripts/test-server env); --second-user signs in as env.json's second person.
"""
import argparse
import html.parser
import json
import os
import pathlib
import sys
import urllib.parse

import requests

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
from browser_record import record  # noqa: E402
from following_browser import self_posting_form  # noqa: E402


class Forms(html.parser.HTMLParser):
    """Collects every form's action and inputs."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action") or "", "id": attrs.get("id") or "", "fields": {}})
        elif tag == "input" and self.forms and attrs.get("name") and attrs.get("type") != "submit":
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


def forms_of(page):
    parser = Forms()
    parser.feed(page)
    return parser.forms


def credentials(second=False):
    """The username and password: the test server's second person (bob) with --second-user."""
    username = os.environ.get("NATIVEAUTH_TEST_USERNAME")
    password = os.environ.get("NATIVEAUTH_TEST_PASSWORD")
    if username and password and not second:
        return username, password
    env = pathlib.Path(os.environ.get("NATIVEAUTH_TEST_STATE", pathlib.Path(__file__).resolve().parents[1] / ".test-server")) / "env.json"
    data = json.loads(env.read_text())
    if second:
        return data["second_username"], data["second_password"]
    return data["username"], data["password"]


def fail(message):
    print(f"scripted-browser: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deny", action="store_true", help="deny consent instead of approving")
    parser.add_argument("--print-callback", action="store_true", help="print the redirect to the app instead of following it")
    parser.add_argument("--device", action="store_true", help="approve a device code at the verification page")
    parser.add_argument("--user-code", help="the device's user code (default: the URL's user_code)")
    parser.add_argument("--second-user", action="store_true", help="sign in as the test server's second person")
    parser.add_argument("url")
    args = parser.parse_args()
    if args.device:
        approve_device(args)
        return

    record()
    session = requests.Session()
    username, password = credentials(args.second_user)
    # NativeAuth hands the browser a one-time start address on its loopback listener: a redirect to
    # the authorization URL, or a form that posts an end-session request.
    first = None
    parts = urllib.parse.urlsplit(args.url)
    if parts.hostname in ("127.0.0.1", "::1") and parts.path.startswith("/start/"):
        start = session.get(args.url, allow_redirects=False, timeout=30)
        form = self_posting_form(start.text) if start.status_code == 200 else None
        if start.status_code in (301, 302, 303, 307, 308) and start.headers.get("Location"):
            args.url = urllib.parse.urljoin(args.url, start.headers["Location"])
        elif form:
            args.url = urllib.parse.urljoin(args.url, form.action)
            first = session.post(args.url, data=form.fields, allow_redirects=False, timeout=30)
        else:
            fail(f"the start address answered HTTP {start.status_code} without a redirect or a form")
    origin = urllib.parse.urlsplit(args.url)[:2]

    def walk(response):
        """Follows redirects while they stay on the authorization server; returns the last response."""
        for _ in range(10):
            location = response.headers.get("Location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                return response
            target = urllib.parse.urljoin(response.url, location)
            if urllib.parse.urlsplit(target)[:2] != origin:
                return response
            response = session.get(target, allow_redirects=False, timeout=30)
        fail("too many redirects")

    response = walk(first if first is not None else session.get(args.url, allow_redirects=False, timeout=30))
    for _ in range(3):
        if response.status_code in (301, 302, 303, 307, 308):
            break  # leaving the server: the redirect to the app
        if response.status_code != 200:
            fail(f"the server answered HTTP {response.status_code}")
        forms = forms_of(response.text)
        login = next((f for f in forms if "password" in f["fields"]), None)
        consent = next((f for f in forms if f["id"] == "authorizationForm"), None)
        if login:
            fields = dict(login["fields"], username=username, password=password)
            action = urllib.parse.urljoin(response.url, login["action"])
            response = walk(session.post(action, data=fields, headers={"Referer": response.url}, allow_redirects=False, timeout=30))
        elif consent:
            fields = dict(consent["fields"])
            if not args.deny:
                fields["allow"] = "Authorize"
            action = urllib.parse.urljoin(response.url, consent["action"]) if consent["action"] else response.url
            response = walk(session.post(action, data=fields, headers={"Referer": response.url}, allow_redirects=False, timeout=30))
        else:
            fail("found neither a login form nor a consent form")
    location = response.headers.get("Location")
    if not location:
        fail(f"no redirect to the app (HTTP {response.status_code})")
    callback = urllib.parse.urljoin(response.url, location)
    if args.print_callback:
        print(callback)
        return
    answer = requests.get(callback, allow_redirects=False, timeout=30)
    print(f"scripted-browser: the app answered HTTP {answer.status_code}", file=sys.stderr)


def approve_device(args):
    """Signs in at the verification page, enters the user code and accepts or denies the device."""
    session = requests.Session()
    username, password = credentials(args.second_user)
    response = session.get(args.url, timeout=30)
    for _ in range(4):
        if response.status_code != 200:
            fail(f"the device page answered HTTP {response.status_code}")
        forms = forms_of(response.text)
        login = next((f for f in forms if "password" in f["fields"]), None)
        code = next((f for f in forms if "user_code" in f["fields"]), None)
        decide = 'name="action"' in response.text
        if login:
            fields = dict(login["fields"], username=username, password=password)
            action = urllib.parse.urljoin(response.url, login["action"])
            response = session.post(action, data=fields, headers={"Referer": response.url}, timeout=30)
        elif code:
            user_code = args.user_code or code["fields"]["user_code"]
            if not user_code:
                fail("no user code: pass --user-code or the complete verification URI")
            fields = dict(code["fields"], user_code=user_code)
            response = session.post(response.url, data=fields, headers={"Referer": response.url}, timeout=30)
        elif decide and forms:
            fields = dict(forms[0]["fields"], action="deny" if args.deny else "accept")
            response = session.post(response.url, data=fields, headers={"Referer": response.url}, timeout=30)
            if response.status_code != 200:
                fail(f"the decision answered HTTP {response.status_code}")
            print(f"scripted-browser: device {'denied' if args.deny else 'accepted'}", file=sys.stderr)
            return
        else:
            fail("found no login, user code or decision form on the device page")
    fail("the device page did not reach a decision")


if __name__ == "__main__":
    main()
