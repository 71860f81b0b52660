// The local test server and the approving presenter are public API of NativeAuthTesting; the
// project's tests get them with TestSupport.
@_exported public import NativeAuthTesting
