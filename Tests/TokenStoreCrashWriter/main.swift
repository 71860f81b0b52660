// Saves generation after generation of token sets (TestSupport's CrashGenerations) until it is
// killed: the child of FileTokenStoreCrashTests, which kill -9s it at random moments, and of the
// keyring tests, which kill the keyring daemon under it. Prints "saved" once its first set is in
// place (on stderr with --keyring).
//
//     TokenStoreCrashWriter DIRECTORY FIRST-GENERATION           a FileTokenStore in DIRECTORY
//     TokenStoreCrashWriter --keyring LOCK-DIRECTORY FIRST-GENERATION
//                                                                the Secret Service (session bus)
//     TokenStoreCrashWriter --keyring-read LOCK-DIRECTORY        prints the stored generation
import Foundation
import NativeAuth
import NativeAuthKeyring
import TestSupport

func fail(_ text: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((text + "\n").utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first?.hasPrefix("--") == true ? arguments.removeFirst() : "--file"
guard let directory = arguments.first else {
    fail("usage: TokenStoreCrashWriter [--keyring|--keyring-read] DIRECTORY [FIRST-GENERATION]", status: 2)
}
let store: any TokenStore =
    mode == "--file"
    ? FileTokenStore(directory: directory)
    : SecretServiceTokenStore(lockDirectory: directory, timeout: .seconds(5))

if mode == "--keyring-read" {
    do {
        guard let tokens = try await store.load(CrashGenerations.key) else { fail("nothing stored", status: 1) }
        guard let generation = CrashGenerations.generation(of: tokens) else { fail("a mixed set", status: 1) }
        print(generation)
        exit(0)
    } catch {
        fail("load failed: \(error)", status: 1)
    }
}
guard arguments.count == 2, let first = Int(arguments[1]) else {
    fail("usage: TokenStoreCrashWriter [--keyring] DIRECTORY FIRST-GENERATION", status: 2)
}
var generation = first
while true {
    do {
        try await store.save(CrashGenerations.tokens(generation), for: CrashGenerations.key)
    } catch {
        fail("save failed at generation \(generation): \(error)", status: 1)
    }
    if generation == first {
        // The keyring tests wait for it on stderr (TestSupport's RunningCommand.line(where:)).
        (mode == "--file" ? FileHandle.standardOutput : FileHandle.standardError).write(Data("saved\n".utf8))
    }
    generation += 1
}
