internal import CNativeAuthPOSIX
internal import Foundation

/// A loopback port to register before a listener binds it (a server that matches redirect URIs
/// exactly needs the port in the registration).
enum FreePort {
    /// A TCP port on 127.0.0.1 that was free when asked.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/network`` when the system gives none.
    static func loopback() throws(AuthError) -> Int {
        let port = nativeauth_free_loopback_port()
        guard port > 0 else {
            throw AuthError(
                .network, "no free port on 127.0.0.1 for the redirect URI: \(String(cString: strerror(errno)))")
        }
        return Int(port)
    }
}
