// The local test server and the approving presenter are public API of NativeAuthTesting; the
// project's tests get them with TestSupport, and the products the tests exercise beside the core:
// the presenters and the two transports.
@_exported public import NativeAuthAsyncHTTPClient
@_exported public import NativeAuthPresenters
@_exported public import NativeAuthTesting
@_exported public import NativeAuthURLSession
