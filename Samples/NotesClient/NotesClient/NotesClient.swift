// notes-client: the client swift-openapi-generator made of ../openapi.yaml (in ../NotesAPI), its
// operations carrying NativeAuth's tokens through AuthenticationMiddleware. It signs in through the
// browser once (later runs reuse the sign-in, refreshed as needed), then calls the Notes API.
//
//     notes-client --issuer URL --client-id ID --api URL [--store DIR] profile
//     notes-client --issuer URL --client-id ID --api URL [--store DIR] note TEXT
//
// `scripts/lib/notes_api.py` serves the API for the project's test server (scripts/test-server).

import Foundation
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthOpenAPI
import NativeAuthPresenters
import NotesAPI
import OpenAPIAsyncHTTPClient

@main
struct NotesClient {
    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        let usage = "usage: notes-client --issuer URL --client-id ID --api URL [--store DIR] (profile | note TEXT)"
        guard let issuer = value("--issuer").flatMap(URL.init(string:)), let clientID = value("--client-id"),
            let api = value("--api").flatMap(URL.init(string:))
        else { throw AuthError(.configurationInvalid, usage) }
        let flags = ["--issuer", "--client-id", "--api", "--store"]
        var command: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            if flags.contains(arguments[index]) {
                index += 2
            } else {
                command.append(arguments[index])
                index += 1
            }
        }

        var registry = ProviderRegistry()
        try registry.register(GenericOIDCProvider.self)
        let provider = try registry.makeProvider(
            ProviderConfiguration(issuer: issuer, clientID: clientID, scopes: ["openid", "notes:write"]))
        let http = NativeAuthAsyncHTTPClient.AsyncHTTPClientTransport()
        let authenticator = Authenticator(
            provider: provider, store: FileTokenStore(directory: value("--store")), transport: http)
        if try await authenticator.currentTokens() == nil {
            try await authenticator.login(.browser(LoopbackPresenter()))
        }

        let client = Client(
            serverURL: api, transport: OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(),
            middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api)])
        switch command.first {
        case "profile":
            let profile = try await client.getProfile().ok.body.json
            print("sub: \(profile.sub)")
            print("scope: \(profile.scope)")
        case "note" where command.count == 2:
            let note = try await client.createNote(body: .json(.init(text: command[1]))).created.body.json
            print("note \(note.id) by \(note.owner): \(note.text)")
        default:
            throw AuthError(.configurationInvalid, usage)
        }
    }
}
