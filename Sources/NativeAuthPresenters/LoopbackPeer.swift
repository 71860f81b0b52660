internal import CNativeAuthPOSIX
internal import Foundation
internal import NIOCore
internal import NativeAuth

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Musl)
    package import Musl
#elseif canImport(Darwin)
    package import Darwin
#endif

/// Who is at the other end of a loopback connection.
///
/// Any local user can connect to the loopback listener, and the authorization URL of a sign-in
/// (its `state`, the port) can be read by other users from the browser's command line. On Linux the
/// kernel says which user owns the connecting socket: `/proc/net/tcp` and `/proc/net/tcp6` list
/// every TCP socket with its owner's uid. A request from a socket of another user is refused, so
/// another user cannot deliver a code for their own account to this sign-in (RFC 9700 §4.5).
/// The kernel is asked about the one socket with sock_diag (`NETLINK_SOCK_DIAG`), which costs the
/// same however many sockets the machine has; the tables are read only when that fails.
package enum LoopbackPeer {
    /// Whether the peer of a connection belongs to this process's user; `true` where the system
    /// cannot tell (not Linux), `false` on Linux when the peer's socket cannot be found.
    static func isCurrentUser(remote: SocketAddress?, local: SocketAddress?) -> Bool {
        #if os(Linux)
            guard let remote, let local, let peerPort = remote.port, let ourPort = local.port else { return false }
            // One sock_diag question about the peer's socket (its local end is our remote end);
            // the text tables (every TCP socket of the machine) only when netlink is unavailable.
            if let peerAddress = remote.ipAddress, let ourAddress = local.ipAddress,
                let family = remote.protocol == .inet6 ? AF_INET6 : remote.protocol == .inet ? AF_INET : nil
            {
                let owner = nativeauth_tcp_socket_owner(
                    family, peerAddress, UInt16(truncatingIfNeeded: peerPort), ourAddress,
                    UInt16(truncatingIfNeeded: ourPort))
                if owner >= 0 { return uid_t(truncatingIfNeeded: owner) == getuid() }
            }
            return owner(peerPort: peerPort, listenerPort: ourPort) == getuid()
        #else
            return true
        #endif
    }

    /// The uid column of the line whose local port is `peerPort` and remote port `listenerPort`,
    /// in the text of `/proc/net/tcp` (lines `sl local_address rem_address st tx:rx tr:when
    /// retrnsmt uid …`, addresses `HEX:PORT` with the port in hexadecimal).
    package static func owner(in table: String, peerPort: Int, listenerPort: Int) -> uid_t? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7,
                port(of: fields[1]) == peerPort,
                port(of: fields[2]) == listenerPort,
                let uid = uid_t(fields[7])
            else { continue }
            return uid
        }
        return nil
    }

    private static func port(of address: Substring) -> Int? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        return Int(address[address.index(after: colon)...], radix: 16)
    }

    #if os(Linux)
        /// The uid owning the socket whose local port is `peerPort` and remote port `listenerPort`.
        static func owner(peerPort: Int, listenerPort: Int) -> uid_t? {
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                guard let text = contents(of: table) else { continue }
                if let uid = owner(in: text, peerPort: peerPort, listenerPort: listenerPort) { return uid }
            }
            return nil
        }

        /// The whole of a procfs file (whose size `stat` reports as 0), at most 4 MiB.
        private static func contents(of path: String) -> String? {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while data.count < 4 << 20 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                data.append(contentsOf: buffer[0..<count])
            }
            return String(decoding: data, as: UTF8.self)
        }
    #endif
}
