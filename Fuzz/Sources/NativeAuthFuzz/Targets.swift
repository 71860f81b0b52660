// libFuzzer targets: one executable, the target picked by NATIVEAUTH_FUZZ_TARGET (scripts/fuzz sets
// it). Each target feeds the input to a parser of untrusted input and checks what must hold for
// every input, so that a wrong answer is a crash too, not only a memory error.
import CFuzzerDriver
import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthGitHub
import NativeAuthTesting

/// The fuzz targets by name.
enum FuzzTarget: String, CaseIterable {
    /// LenientJSON: parse, encode, parse again; the lenient field readers on every member.
    case json
    /// application/x-www-form-urlencoded: decoding, and encoding what was decoded.
    case form
    /// Callback URLs and pasted codes against one authorization request.
    case callback
    /// Token responses: JSON (the standard decoder) and GitHub's form-encoded answers.
    case tokenResponse = "token-response"
    /// JWKS documents and compact JWS (ID token) headers.
    case jose

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["NATIVEAUTH_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("set NATIVEAUTH_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()

    func run(_ data: Data) {
        switch self {
        case .json: Self.json(data)
        case .form: Self.form(data)
        case .callback: Self.callback(data)
        case .tokenResponse: Self.tokenResponse(data)
        case .jose: Self.jose(data)
        }
    }

    static func json(_ data: Data) {
        guard let value = try? JSONValue.parse(data) else { return }
        let encoded: [UInt8]
        do {
            encoded = try value.encoded()
        } catch {
            fatalError("a parsed document cannot be encoded: \(error)")
        }
        guard let again = try? JSONValue.parse(encoded) else {
            fatalError("the encoding of a parsed document does not parse: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again == value, "a parsed document changed on the way through encoding")
        if let object = value.objectValue {
            for key in object.keys {
                _ = try? object.string(key)
                _ = try? object.integer(key)
                _ = try? object.bool(key)
                _ = try? object.stringList(key)
                _ = try? object.object(key)
            }
        }
    }

    static func form(_ data: Data) {
        let fields = FormURLEncoding.decode(bytes: data)
        let encoded = FormURLEncoding.encode(fields)
        precondition(
            encoded.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: " ") },
            "form encoding left a space or a non-ASCII byte")
        precondition(FormURLEncoding.decode(encoded) == fields, "decode(encode(fields)) differs from fields")
    }

    private static let issuer = "https://idp.example"
    private static let metadata = ProviderMetadata(
        issuer: issuer,
        authorizationEndpoint: URL(fileURLWithPath: "/authorize"),
        tokenEndpoint: URL(fileURLWithPath: "/token"),
        codeChallengeMethodsSupported: ["S256"],
        authorizationResponseIssParameterSupported: true
    )

    /// `STATE` and `ISSUER` in the input become this request's state and the issuer, so that the
    /// fuzzer gets past the first checks.
    static func callback(_ data: Data) {
        guard let redirect = URL(string: "http://127.0.0.1:8400/callback") else { return }
        let request = AuthorizationRequest(
            metadata: metadata, clientID: "fuzz-client", redirectURI: redirect, scopes: ["openid"])
        let text = String(decoding: data, as: UTF8.self)
            .replacingOccurrences(of: "STATE", with: request.state)
            .replacingOccurrences(of: "ISSUER", with: issuer)
        _ = try? request.validate(pastedCode: text)
        guard let url = URL(string: text) else { return }
        _ = request.isResponse(url)
        _ = request.disposition(of: .redirect(url))
        guard (try? request.validate(callback: url)) != nil else { return }
        let fields = FormURLEncoding.decode(url.query ?? "")
        precondition(
            fields.filter { $0.name == "state" }.map(\.value) == [request.state],
            "a callback without exactly our state was accepted")
        precondition(
            fields.filter { $0.name == "iss" }.map(\.value) == [issuer],
            "a callback without exactly our issuer was accepted, though the server promised iss")
    }

    private static let providers: [any AuthProvider] = {
        let standard = try? GenericOIDCProvider(
            configuration: ProviderConfiguration(issuer: URL(string: issuer), clientID: "fuzz-client"))
        let github = try? GitHubProvider(
            configuration: ProviderConfiguration(provider: GitHubProvider.id, clientID: "fuzz-client"))
        return [standard as (any AuthProvider)?, github].compactMap { $0 }
    }()

    /// The first byte picks the status and the content type; the rest is the body, read as the
    /// exchange path reads a token endpoint's answer with the standard provider's hooks and with
    /// GitHub's (form-encoded answers).
    static func tokenResponse(_ data: Data) {
        guard let first = data.first else { return }
        let statuses: [HTTPResponse.Status] = [.ok, .badRequest, .unauthorized, .internalServerError]
        var response = HTTPResponse(status: statuses[Int(first & 3)])
        response.headerFields[.contentType] =
            first & 4 == 0 ? "application/json" : "application/x-www-form-urlencoded; charset=utf-8"
        let body = Data(data.dropFirst())
        for provider in providers {
            switch ParserEntryPoints.tokenResponse(response, body: body, provider: provider) {
            case .success(let tokens):
                precondition(response.status == .ok, "a token set was read from an HTTP \(response.status.code) answer")
                precondition(!tokens.accessToken.isEmpty, "a token set without an access token")
            case .failure(let error):
                // An error names what went wrong; a body it quotes must have been scrubbed.
                precondition(!error.description.isEmpty)
            }
        }
    }

    static func jose(_ data: Data) {
        _ = ParserEntryPoints.jwks(data)
        _ = ParserEntryPoints.compactJWS(String(decoding: data, as: UTF8.self))
    }
}

/// libFuzzer's own entry point, for a link that takes libFuzzer's `main` (SwiftPM's unoptimized
/// builds do): the same as the callback of ``fuzzMain(_:_:)``.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.selected.run(start.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}

/// The entry point SwiftPM links as `main` in optimized builds (the module is built with
/// `-parse-as-library`): it checks the target name, then runs libFuzzer with the command line.
@_cdecl("NativeAuthFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    _ = FuzzTarget.selected
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { start, count in
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        FuzzTarget.selected.run(data)
        return 0
    }
}
