#!/usr/bin/env python3
"""A $BROWSER for tests: fetches the URL and follows redirects, like a person who approves at once.

    following_browser.py URL

A page that only posts a form to itself (NativeAuth's one-time start page for an end-session URL
that carries an ID token) is posted, as a browser running the page's script would.

It records what it was started with: its argv and its environment, as JSON, in the file named by
BROWSER_RECORD_FILE and in a new file under BROWSER_RECORD_DIR (not NATIVEAUTH_ variables: NativeAuth starts browsers without those), so that the tests
and scripts/lib/redaction_check.py can search them for every secret the servers issued: no token,
code or secret may reach a child's command line or environment.

BROWSER_CA_FILE names a PEM CA to trust for an https:// authorization server in the tests.
"""
import html.parser
import os
import ssl
import sys
import urllib.parse
import urllib.request

from browser_record import record


class SelfPostingForm(html.parser.HTMLParser):
    """The action and hidden fields of a page that posts a form to itself."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.fields = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and (attrs.get("method") or "").lower() == "post":
            self.action = attrs.get("action")
        elif tag == "input" and attrs.get("type") == "hidden" and attrs.get("name"):
            self.fields.append((attrs["name"], attrs.get("value") or ""))


def self_posting_form(page):
    """The form of a page that only posts it (its script submits it), else None."""
    if "document.forms[0].submit()" not in page:
        return None
    form = SelfPostingForm()
    form.feed(page)
    return form if form.action else None


def main():
    record()
    url = sys.argv[-1]
    context = ssl.create_default_context(cafile=os.environ.get("BROWSER_CA_FILE") or None)
    # No proxy: the tests that sign in through one check that the CLI's requests go through it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
    with opener.open(url, timeout=30) as response:
        page = response.read().decode("utf-8", "replace")
        final = response.geturl()
    form = self_posting_form(page)
    if form:
        data = urllib.parse.urlencode(form.fields).encode()
        action = urllib.parse.urljoin(final, form.action)
        opener.open(urllib.request.Request(action, data=data), timeout=30).read()


if __name__ == "__main__":
    main()
