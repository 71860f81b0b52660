#!/usr/bin/env python3
"""Makes the imports of swift-openapi-generator's files that no public declaration uses internal,
so that Swift 6.3 builds them without warnings (the generator's `@diagnose(UnusedImportAccess)`
silences them from Swift 6.4 on only), and marks the files as not to be linted.

    openapi_imports.py FILE...
"""

import re
import sys

RUNTIME = re.compile(
    r"\b(ClientTransport|ClientMiddleware|ServerTransport|HTTPBody|Converter|UndocumentedPayload|"
    r"OpenAPI[A-Z]\w*|AcceptableProtocol|AcceptHeaderContentType|HTTPContentType|MultipartBody)\b"
)

for path in sys.argv[1:]:
    with open(path) as f:
        lines = f.read().split("\n")
    body = "\n".join(line for line in lines if " import " not in line and not line.startswith("import "))
    # An access level is the module's: Foundation stays public when any of its imported types is used.
    foundation = re.findall(r"^public import struct Foundation\.(\w+)$", "\n".join(lines), re.M)
    public = {
        "Foundation": any(re.search(r"\b%s\b" % name, body) for name in foundation),
        "OpenAPIRuntime": bool(RUNTIME.search(body)),
    }
    out = ["// swift-format-ignore-file"]
    for line in lines:
        match = re.match(r"^(@_spi\(Generated\) )?public import (struct )?(Foundation|OpenAPIRuntime)\b", line)
        if match and not public[match.group(3)]:
            line = line.replace("public import", "internal import")
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out))
