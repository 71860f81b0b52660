#!/usr/bin/env python3
"""A person at the sandbox's approval page, for tests: `sandbox-click.py [--deny] URL`.

Loads the authorization URL, clicks Approve (or Deny) on the sandbox's page, and follows the
redirect back to the application's loopback receiver. Any other page (the end-session page, which
redirects by itself) is only loaded. Standard library only. It never prints a URL's query: an
end-session URL carries the ID token.
"""
import re
import sys
import urllib.parse
import urllib.request


def main():
    args = sys.argv[1:]
    decision = "deny" if "--deny" in args else "approve"
    url = [a for a in args if not a.startswith("--")][-1]
    page = urllib.request.urlopen(url, timeout=10).read().decode()
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
