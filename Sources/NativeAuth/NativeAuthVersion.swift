/// The version of NativeAuth, sent in the `User-Agent` header.
public enum NativeAuthVersion {
    /// The semantic version of this release.
    public static let current = "0.1.0"
}
