// Saves generation after generation of token sets (TestSupport's CrashGenerations) to a
// FileTokenStore until it is killed: the child of FileTokenStoreCrashTests, which kill -9s it at
// random moments. Prints "saved" once its first set is in place.
//
//     TokenStoreCrashWriter DIRECTORY FIRST-GENERATION
import Foundation
import NativeAuth
import TestSupport

let arguments = CommandLine.arguments
guard arguments.count == 3, let first = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: TokenStoreCrashWriter DIRECTORY FIRST-GENERATION\n".utf8))
    exit(2)
}
let store = FileTokenStore(directory: arguments[1])
var generation = first
while true {
    do {
        try store.save(CrashGenerations.tokens(generation), for: CrashGenerations.key)
    } catch {
        FileHandle.standardError.write(Data("save failed: \(error)\n".utf8))
        exit(1)
    }
    if generation == first {
        FileHandle.standardOutput.write(Data("saved\n".utf8))
    }
    generation += 1
}
