import Testing
@testable import Recorder

/// Which `-o` names are strftime patterns: those are expanded for each file and never replace a
/// file (`TimeNamedOutputTests`); a "%%" is a literal '%', the same at every time.
@Suite struct OutputNamingTests {
    @Test(arguments: [("rec-%Y%m%d.flac", true), ("talk.flac", false), ("gain-100%%.flac", false),
                      ("100%%-%H.flac", true), ("%%%Y.flac", true), ("odd-%", true), ("%%%%.flac", false)])
    func aNameIsAPatternWhenItHasAConversion(_ pattern: String, _ isPattern: Bool) {
        #expect(OutputNaming(pattern: pattern).hasTimeConversions == isPattern)
    }

    @Test func aDoubledPercentSignIsOnePercentSign() {
        var naming = OutputNaming(pattern: "gain-100%%.flac")
        #expect(naming.next(at: 0) == "gain-100%.flac")
    }
}
