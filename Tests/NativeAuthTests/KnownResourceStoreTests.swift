import Foundation
import NativeAuth
import TestSupport
import Testing

/// The records of resources found by their metadata: one file each, found by the URL under them,
/// a damaged one named with what to do, and nothing secret in them.
@Suite(.testLogging) struct KnownResourceStoreTests {
    private static func url(_ text: String) -> URL { URL(string: text) ?? URL(fileURLWithPath: "/") }

    let first = KnownResource(
        resource: Self.url("https://mcp.example/mcp"), issuer: Self.url("https://as.example"),
        account: "default", scopes: ["mcp:tools"])
    let second = KnownResource(
        resource: Self.url("https://mcp.example/mcp/admin"), issuer: Self.url("https://as.example"),
        account: "mcp.example/mcp/admin", scopes: [], clientID: "pre-registered")

    @Test func aRecordIsFoundByAnyURLUnderItsResourceTheLongestFirst() async throws {
        let directory = try TemporaryDirectory()
        let store = FileKnownResourceStore(directory: directory.path + "/store")
        #expect(try store.knownResources().isEmpty)
        try store.remember(first)
        try store.remember(second)
        #expect(try store.knownResources() == [first, second])
        #expect(try await store.knownResource(covering: URL(string: "https://mcp.example/mcp")!) == first)
        #expect(try await store.knownResource(covering: URL(string: "https://mcp.example/mcp/admin/x")!) == second)
        #expect(try await store.knownResource(covering: URL(string: "https://mcp.example/mcpx")!) == nil)
        #expect(try await store.knownResource(covering: URL(string: "http://mcp.example/mcp")!) == nil)
        #expect(try await store.knownResource(covering: URL(string: "https://mcp.example:8443/mcp")!) == nil)

        var moved = first
        moved.account = "work"
        try store.remember(moved)
        #expect(try store.knownResources() == [moved, second])
        #expect(try store.forget(first.resource))
        #expect(try !store.forget(first.resource))
        #expect(try store.knownResources() == [second])
        // Private like the token files.
        let mode = try FileManager.default.attributesOfItem(atPath: store.path(for: second.resource))[.posixPermissions]
        #expect((mode as? Int).map { $0 & 0o077 } == 0)
    }

    @Test func aDamagedRecordSaysWhichFileAndWhatToDo() throws {
        let directory = try TemporaryDirectory()
        let store = FileKnownResourceStore(directory: directory.path + "/store")
        try store.remember(first)
        try Data("{\"resource\": 1".utf8).write(to: URL(fileURLWithPath: store.path(for: first.resource)))
        #expect {
            try store.knownResources()
        } throws: { error in
            guard let error = error as? AuthError else { return false }
            return error.code == .tokenStoreFailed && error.message.contains(store.path(for: first.resource))
                && error.hint?.contains("delete the file") == true
        }
    }

    @Test func aRecordCopiedOntoAnotherResourcesFileIsNotThatResourcesRecord() throws {
        let directory = try TemporaryDirectory()
        let store = FileKnownResourceStore(directory: directory.path + "/store")
        try store.remember(first)
        try store.remember(second)
        // Someone who can write the directory copies one record over the other's name.
        try FileManager.default.removeItem(atPath: store.path(for: second.resource))
        try FileManager.default.copyItem(
            atPath: store.path(for: first.resource), toPath: store.path(for: second.resource))
        #expect(try store.knownResources() == [first])
    }

    @Test func theMemoryStoreKeepsTheSameRecords() async throws {
        let store = MemoryKnownResourceStore()
        await store.remember(second)
        await store.remember(first)
        #expect(await store.knownResources() == [first, second])
        #expect(try await store.knownResource(covering: URL(string: "https://mcp.example/mcp/tools")!) == first)
        #expect(await store.forget(second.resource))
        #expect(await store.knownResources() == [first])
    }
}
