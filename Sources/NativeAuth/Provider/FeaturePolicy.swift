/// Whether a client uses a protocol feature the server may offer: DPoP (RFC 9449,
/// ``ProviderConfiguration/dpop``) or pushed authorization requests (RFC 9126,
/// ``ProviderConfiguration/pushedAuthorizationRequests``).
public enum FeaturePolicy: String, Sendable, CaseIterable {
    /// Used when the server's metadata announces it (and the provider module does not opt out);
    /// the default. JSON `auto`.
    case automatic = "auto"
    /// Always used; an answer that shows the server did not (a `Bearer` token where DPoP was asked
    /// for) is an error, and nothing is stored. JSON `required`.
    case required
    /// Never used. JSON `off`.
    case disabled = "off"
}
