internal import Foundation
internal import LenientJSON

/// A `Bearer` challenge from a `WWW-Authenticate` header (RFC 6750 §3), or a `DPoP` one (RFC 9449
/// §7.1, with the same parameters), parsed leniently.
///
/// ```
/// WWW-Authenticate: Bearer realm="example", error="invalid_token", error_description="expired"
/// WWW-Authenticate: DPoP error="use_dpop_nonce", algs="ES256"
/// ```
@_spi(Provider) public struct BearerChallenge: Sendable, Equatable {
    /// The scheme, lowercased: `bearer` or `dpop`.
    public var scheme: String
    /// The challenge's parameters with lowercased names (`realm`, `error`, `scope`, …).
    public var parameters: [String: String]

    /// The `error` parameter (`invalid_token`, `insufficient_scope`, `invalid_request`).
    public var error: String? { parameters["error"] }
    /// The `error_description` parameter.
    public var errorDescription: String? { parameters["error_description"] }
    /// The `scope` parameter: the scopes the resource needs.
    public var scope: String? { parameters["scope"] }

    /// The stronger or more recent sign-in the challenge asks for, when it asks for one: RFC 9470's
    /// `insufficient_user_authentication` (with `acr_values` and `max_age`), or a claims challenge
    /// (`insufficient_claims` with `claims`, base64-encoded JSON, as Microsoft Entra sends for
    /// Conditional Access). `nil` for any other challenge, or one whose parameters cannot be read.
    public var stepUp: LoginOptions? {
        switch error {
        case "insufficient_user_authentication":
            var options = LoginOptions()
            options.acrValues = (parameters["acr_values"] ?? "").split(separator: " ").map(String.init)
            if let text = parameters["max_age"] {
                guard let seconds = Int(text), seconds >= 0 else { return nil }
                options.maxAge = seconds
            }
            guard !options.acrValues.isEmpty || options.maxAge != nil else { return nil }
            return options
        case "insufficient_claims":
            guard let encoded = parameters["claims"], let data = Base64URL.decode(encoded),
                let claims = try? JSONValue.parse(data).objectValue
            else { return nil }
            return LoginOptions(claims: claims)
        default:
            return nil
        }
    }

    /// Parses the first challenge of one of `schemes` in a `WWW-Authenticate` value; `nil` when
    /// there is none.
    ///
    /// - Parameters:
    ///   - headerValue: The header's value.
    ///   - schemes: The schemes to look for, lowercased; default `bearer` and `dpop`.
    public init?(headerValue: String, schemes: Set<String> = ["bearer", "dpop"]) {
        var scanner = ChallengeScanner(headerValue)
        while let scheme = scanner.nextScheme() {
            let parameters = scanner.parameters()
            if schemes.contains(scheme.lowercased()) {
                self.scheme = scheme.lowercased()
                self.parameters = parameters
                return
            }
        }
        return nil
    }

    /// Every `Bearer` and `DPoP` challenge of a `WWW-Authenticate` value, in order (a server that
    /// takes both sends one of each).
    package static func all(in headerValue: String) -> [BearerChallenge] {
        var scanner = ChallengeScanner(headerValue)
        var challenges: [BearerChallenge] = []
        while let scheme = scanner.nextScheme() {
            let parameters = scanner.parameters()
            let lowercased = scheme.lowercased()
            if lowercased == "bearer" || lowercased == "dpop" {
                challenges.append(BearerChallenge(scheme: lowercased, parameters: parameters))
            }
        }
        return challenges
    }

    private init(scheme: String, parameters: [String: String]) {
        self.scheme = scheme
        self.parameters = parameters
    }
}

/// Splits `scheme param=value, param="quoted, value", Other-Scheme …` into schemes and parameters.
private struct ChallengeScanner {
    private let scalars: [Unicode.Scalar]
    private var offset = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    private var current: Unicode.Scalar? { offset < scalars.count ? scalars[offset] : nil }

    private mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
        while let scalar = current, predicate(scalar) { offset += 1 }
    }

    private mutating func token() -> String {
        var text = ""
        while let scalar = current, isTokenCharacter(scalar) {
            text.unicodeScalars.append(scalar)
            offset += 1
        }
        return text
    }

    private func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        !(scalar == " " || scalar == "\t" || scalar == "," || scalar == "=" || scalar == "\"")
    }

    mutating func nextScheme() -> String? {
        skip { $0 == " " || $0 == "\t" || $0 == "," }
        let scheme = token()
        return scheme.isEmpty ? nil : scheme
    }

    /// Reads `name=value` pairs until the next scheme (a token not followed by `=`) or the end.
    mutating func parameters() -> [String: String] {
        var result: [String: String] = [:]
        while true {
            skip { $0 == " " || $0 == "\t" || $0 == "," }
            let start = offset
            let name = token()
            skip { $0 == " " || $0 == "\t" }
            guard !name.isEmpty, current == "=" else {
                offset = start  // a new scheme, or the end
                return result
            }
            offset += 1
            skip { $0 == " " || $0 == "\t" }
            result[name.lowercased()] = current == "\"" ? quoted() : token()
        }
    }

    private mutating func quoted() -> String {
        offset += 1  // opening quote
        var text = ""
        while let scalar = current, scalar != "\"" {
            if scalar == "\\", offset + 1 < scalars.count {
                offset += 1
            }
            text.unicodeScalars.append(scalars[offset])
            offset += 1
        }
        if current == "\"" { offset += 1 }
        return text
    }
}
