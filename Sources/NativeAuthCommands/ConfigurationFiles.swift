internal import ArgumentParser
internal import CNativeAuthPOSIX
internal import Foundation
internal import LenientJSON
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces a configuration file another program reads in one step (0600); its directory is made
/// (0700) when missing.
func writeFile(_ bytes: [UInt8], to path: String, what: String) throws(AuthError) {
    let directory = (path as NSString).deletingLastPathComponent
    if !FileManager.default.fileExists(atPath: directory) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw AuthError(.configurationInvalid, "cannot make the directory \(directory) for the \(what)")
        }
    }
    try SecretFile.writePrivately(bytes, to: path, what: what)
}
