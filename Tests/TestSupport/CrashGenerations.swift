import Foundation
public import NativeAuth

/// Token sets that say which generation they are, for the crash-safety test of `FileTokenStore`:
/// every field of generation N carries N and a length derived from N, so a reader tells a complete
/// set from a torn, mixed or empty one.
public enum CrashGenerations {
    /// The key every generation is saved under.
    public static let key = TokenKey(issuer: "https://crash.example", clientID: "crash-test")

    /// Generation `n`: 1 to 30 KB, depending on `n`.
    public static func tokens(_ n: Int) -> TokenSet {
        TokenSet(
            accessToken: field("access", n, length: 1_000 + (n * 7_919) % 20_000),
            refreshToken: field("refresh", n, length: 500 + (n * 104_729) % 8_000),
            idToken: field("id", n, length: 200 + (n * 1_299_709) % 2_000),
            scopes: ["openid", "generation-\(n)"],
            expiresAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(n)),
            issuedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(n)),
            subject: "subject-\(n)"
        )
    }

    /// The generation of a complete set, or `nil` when any field disagrees with the others.
    public static func generation(of tokens: TokenSet) -> Int? {
        guard let n = tokens.subject.flatMap({ Int($0.dropFirst("subject-".count)) }),
            tokens.subject == "subject-\(n)"
        else { return nil }
        return tokens == Self.tokens(n) ? n : nil
    }

    private static func field(_ name: String, _ n: Int, length: Int) -> String {
        let head = "\(name)-\(n)-"
        return head
            + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: max(0, length - head.count))
    }
}
