internal import Foundation
public import NativeAuth

extension Authenticator {
    /// Marks the access token as expired (in memory and in the store), so that the next
    /// `accessToken()` refreshes: for testing an app's own refresh paths.
    public func expireAccessToken() async throws {
        try await holder.owner().modify { $0.expiresAt = Date(timeIntervalSince1970: 0) }
    }

    /// Marks every token for a single resource (`TokenSet.resourceTokens`) as expired, in memory
    /// and in the store, so that the next `accessToken(for:)` of each asks again.
    public func expireResourceTokens() async throws {
        try await holder.owner().modify { tokens in
            for index in tokens.resourceTokens.indices {
                tokens.resourceTokens[index].expiresAt = Date(timeIntervalSince1970: 0)
            }
        }
    }

    /// Replaces the access token (in memory and in the store) with one the server will refuse,
    /// keeping its expiry: as a token the server revoked looks to the app, whose next request gets
    /// a 401 and refreshes. For testing an app's retry paths.
    public func refuseAccessToken() async throws {
        try await holder.owner().modify { $0.accessToken = "nativeauth-refused-access-token" }
    }

    /// Replaces the refresh token (in memory and in the store) with one the server will refuse,
    /// so that the next refresh fails with `login_required`: for testing an app's sign-in-again
    /// path. Does nothing when there is no refresh token.
    public func expireRefreshToken() async throws {
        try await holder.owner().modify { tokens in
            if tokens.refreshToken != nil { tokens.refreshToken = "nativeauth-expired-refresh-token" }
        }
    }
}
