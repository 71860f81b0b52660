internal import Foundation
@_spi(Provider) internal import NativeAuth

/// Whether an API found by its metadata may get its token from an existing sign-in that was not
/// made for it (another API's of the same server, or the active account's), as
/// `ResourceClient.Options.sharesSignIn` asks: named with `--share-sign-in`, else yes on the
/// terminal; with neither a name nor a terminal, the command stops and says how to agree.
///
/// Without the question, an API that names the authorization server of an API the person already
/// uses would get a token from that sign-in with no browser and no word (and from a server that
/// ignores `resource` on a refresh, one that works at the first API).
struct SignInLending: Sendable {
    /// The APIs named with `--share-sign-in`.
    var named: [String]
    /// Whether the request's body comes from standard input (then no question can be asked).
    var bodyFromStandardInput: Bool

    /// The option's name, as errors cite it.
    static let option = "--share-sign-in"

    /// Whether the sign-in is lent to `shared.resource`; `false` (a no on the terminal) signs in
    /// for it alone.
    func lends(_ shared: SharedSignIn) async throws -> Bool {
        if named.contains(where: { IssuerIdentifier($0) == IssuerIdentifier(shared.resource) }) { return true }
        let resource = Redaction.scrubURL(shared.resource.absoluteString)
        let madeFor =
            shared.madeFor.isEmpty
            ? "" : " for " + shared.madeFor.map { Redaction.scrubURL($0.absoluteString) }.joined(separator: ", ")
        let situation =
            "\(resource) takes tokens from \(Redaction.scrubURL(shared.issuer.absoluteString)), where account"
            + " \(shared.account) signed in\(madeFor)"
        guard CommandSupport.canAsk(bodyFromStandardInput: bodyFromStandardInput) else {
            throw AuthError(
                .configurationInvalid,
                situation + "; that sign-in is not lent to another API without your yes",
                hint: "if you trust \(resource) with it, give \(Self.option) \(resource); to sign in for it alone,"
                    + " give --account with a new name")
        }
        return try await CommandSupport.answersYes(
            situation + ". Let \(resource) use that sign-in (no: sign in for it alone)?")
    }
}
