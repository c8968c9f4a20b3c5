import Testing

/// `#expect(actual == expected)` for long collections: decoded samples, a file's bytes.
///
/// They are compared here, outside the macro: on a failure `#expect` describes two unequal
/// collections by working out their whole difference (Myers, O(N·D)), which took 52 s for one
/// second of stereo with a third of the samples changed on this machine, and would take hours for
/// the minutes of audio some tests decode; a failing test would run CI over its time and report
/// nothing. This reports where they first differ, and their counts.
func expectSameElements<C: Collection & Equatable>(
    _ actual: C, _ expected: C, _ comment: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation
) where C.Element: Equatable {
    let same = actual == expected
    #expect(same, "\(differenceReport(actual, expected, comment()))", sourceLocation: sourceLocation)
}

/// The same for two collections of different types (an array and a slice of another).
func expectSameElements<A: Collection, B: Collection>(
    _ actual: A, _ expected: B, _ comment: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation
) where A.Element == B.Element, A.Element: Equatable {
    let same = actual.elementsEqual(expected)
    #expect(same, "\(differenceReport(actual, expected, comment()))", sourceLocation: sourceLocation)
}

private func differenceReport<A: Collection, B: Collection>(_ actual: A, _ expected: B, _ comment: String) -> String
where A.Element == B.Element, A.Element: Equatable {
    comment.isEmpty ? firstDifference(actual, expected) : "\(comment): \(firstDifference(actual, expected))"
}

/// Where two sequences first differ, for failure messages.
func firstDifference<A: Collection, B: Collection>(_ a: A, _ b: B) -> String where A.Element == B.Element, A.Element: Equatable {
    for (index, pair) in zip(a, b).enumerated() where pair.0 != pair.1 {
        return "first difference at element \(index): \(pair.0) vs \(pair.1) (counts \(a.count), \(b.count))"
    }
    return a.count == b.count ? "identical" : "counts differ: \(a.count) vs \(b.count)"
}
