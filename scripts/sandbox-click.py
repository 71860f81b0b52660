#!/usr/bin/env python3
"""A person at the sandbox's approval page, for tests: `sandbox-click.py [--deny] URL`.

Loads the authorization URL, clicks Approve (or Deny) on the sandbox's page, and follows the
redirect back to the application's loopback receiver. Any other page (the end-session page, which
redirects by itself) is only loaded. Standard library only. It never prints a URL's query: an
end-session URL carries the ID token.
"""
import pathlib
import re
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
from browser_record import record  # noqa: E402
from following_browser import self_posting_form  # noqa: E402


def main():
    args = sys.argv[1:]
    decision = "deny" if "--deny" in args else "approve"
    record()
    # NativeAuth hands the browser a one-time start address that redirects to the authorization
    # URL, or serves a form posting the end-session request: the page's own address is where it ends.
    with urllib.request.urlopen([a for a in args if not a.startswith("--")][-1], timeout=10) as response:
        page = response.read().decode()
        url = response.geturl()
    form = self_posting_form(page)
    if form:
        data = urllib.parse.urlencode(form.fields).encode()
        urllib.request.urlopen(urllib.request.Request(urllib.parse.urljoin(url, form.action), data=data), timeout=10).read()
        return
    match = re.search(r'name="transaction" value="([^"]+)"', page)
    if not match:
        path = urllib.parse.urlsplit(url).path
        if path.endswith("/authorize"):
            sys.exit("sandbox-click: no approval form on " + path)
        return
    form = urllib.parse.urlencode({"transaction": match.group(1), "decision": decision}).encode()
    # urllib follows the 303 to the loopback receiver with a GET.
    urllib.request.urlopen(urllib.request.Request(url.split("?")[0], data=form), timeout=10).read()


if __name__ == "__main__":
    main()
