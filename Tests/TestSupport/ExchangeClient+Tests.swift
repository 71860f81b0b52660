package import Foundation
import Logging
package import NativeAuth

extension ExchangeClient {
    /// A client for `provider` that sends through `transport` on the system clock: for tests of the
    /// exchange path itself (discovery, answers, error mapping).
    package static func forTests(
        _ provider: any AuthProvider,
        transport: any HTTPTransport = URLSessionTransport()
    ) -> ExchangeClient {
        ExchangeClient(
            provider: provider, transport: transport, clock: .system, logger: Logger(label: "NativeAuth.tests"))
    }

    /// A client for a generic OpenID Connect provider at `issuer`.
    package static func forTests(
        issuer: URL,
        transport: any HTTPTransport = URLSessionTransport()
    ) throws -> ExchangeClient {
        forTests(
            try GenericOIDCProvider(configuration: ProviderConfiguration(issuer: issuer, clientID: "test-client")),
            transport: transport
        )
    }
}
